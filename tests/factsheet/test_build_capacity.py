"""Capacity at SLO in a build, against a server whose capacity is known.

The mock server serves 4 requests at once, each taking 100 + 7 × 20 = 240 ms; more concurrent users
queue. Up to 4 users a request takes 240 ms; from 5 users on, one request waits a whole service time
(≥ 480 ms). With a p99 E2EL threshold of 450 ms the largest passing concurrency is exactly 4.

The mock is never early, only late, so the failing side holds on any host; the threshold sits just
below it to leave a slow CI host 210 ms of slack on the passing side.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from factsheet.cli import app
from probes.targets.mock_server import MockServerConfig, running

CAPACITY = "  capacity: {knob: concurrency, start: 1, max_value: 16, num_requests: 24}\n"


def test_capacity_found_and_recorded(tmp_path, endpoint_spec):
    with running(MockServerConfig(model="mock-model", ttft_ms=100, itl_ms=20, slots=4)) as url:
        spec = endpoint_spec(tmp_path, url)
        text = spec.read_text().replace("slo: {ttft_ms: 80, tpot_ms: 10}", "slo: {e2el_ms: 450}")
        spec.write_text(
            text.replace(
                "  points:\n",
                "  capacity: {knob: concurrency, start: 1, max_value: 16, num_requests: 24}\n  points:\n",
            )
        )
        result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    sheet = json.loads((tmp_path / "out" / "factsheet.json").read_text())
    cap = sheet["load"]["capacity"]
    assert cap["result"]["capacity"] == 4
    values = [p["value"] for p in cap["result"]["points"]]
    assert values[:4] == [1, 2, 4, 8]  # doubling until the first failure, every point kept
    assert len(cap["records"]) == len(values)
    assert all(p["sufficient_samples"] is False for p in cap["result"]["points"])  # 24 < 459
    assert CliRunner().invoke(app, ["validate", str(tmp_path / "out" / "factsheet.json")]).exit_code == 0
    html = (tmp_path / "out" / "factsheet.html").read_text()
    assert "Capacity at SLO" in html and "<strong>4</strong>" in html


def test_capacity_without_p99_threshold_is_bad_input(tmp_path, endpoint_spec):
    spec = endpoint_spec(tmp_path, "http://127.0.0.1:9")
    spec.write_text(spec.read_text().replace("  points:\n", CAPACITY + "  points:\n"))
    result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "capacity needs a threshold on slo.e2el_ms" in result.output
