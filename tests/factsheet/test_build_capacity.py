"""Capacity at SLO in a build, against a server whose capacity is known.

The mock server serves 4 requests at once, each taking 100 + 7 × 20 = 240 ms; more concurrent users
queue. Up to 4 users a request takes 240 ms; from 5 users on, one request waits a whole service time
(≥ 480 ms). With a p99 E2EL threshold of 450 ms the largest passing concurrency is exactly 4.

The mock is never early, only late, so the failing side holds on any host; the threshold sits just
below it to leave a slow CI host 210 ms of slack on the passing side.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.targets.mock_server import MockServerConfig, running
from tests.support.mock_spec import e2el_slo

pytestmark = pytest.mark.system

CAPACITY = {"knob": "concurrency", "start": 1, "max_value": 16, "num_requests": 24}


def test_capacity_found_and_recorded(tmp_path, endpoint_spec):
    with running(MockServerConfig(model="mock-model", ttft_ms=100, itl_ms=20, slots=4)) as url:
        spec = endpoint_spec(tmp_path, url, overrides={"load": {"slo": e2el_slo(450), "capacity": CAPACITY}})
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
    spec = endpoint_spec(tmp_path, "http://127.0.0.1:9", overrides={"load": {"capacity": CAPACITY}})
    result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "capacity needs a threshold on slo.e2el_ms" in result.output


def test_validate_replays_the_search_with_its_confirmation(tmp_path, endpoint_spec):
    """The result states the search's parameters (schema 1.1.0), so validate replays find_capacity on the
    recorded runs: a flipped verdict, a reordered probe, an edited stop reason or capacity is each named."""
    with running(MockServerConfig(model="mock-model", ttft_ms=100, itl_ms=20, slots=4)) as url:
        capacity = {
            "knob": "concurrency",
            "start": 2,
            "max_value": 8,
            "num_requests": 16,
            "confirm_requests": 24,
        }
        spec = endpoint_spec(tmp_path, url, overrides={"load": {"slo": e2el_slo(450), "capacity": capacity}})
        out = tmp_path / "out"
        assert CliRunner().invoke(app, ["build", str(spec), "-o", str(out)]).exit_code == 0
    sheet = json.loads((out / "factsheet.json").read_text())
    result = sheet["load"]["capacity"]["result"]
    assert result["search"] == {
        "start": 2, "max_value": 8, "min_value": 1, "tolerance": 0.05, "max_points": 8, "max_confirmations": 2,
        "confirm_step": "one", "rule": "bracketing", "confirm_runs": 1,
    }  # fmt: skip
    assert result["points"][-1]["confirmation"] and result["capacity"] == 4
    ok = CliRunner().invoke(app, ["validate", str(out / "factsheet.json")])
    assert ok.exit_code == 0, ok.output
    original = json.dumps(sheet)
    last = len(result["points"]) - 1
    edits = {
        f"load.capacity.result.points[{last}].passed": lambda c: c["points"][-1].update(passed=False),
        "load.capacity.result.points[1].value": lambda c: c["points"][1].update(value=3.0),
        "load.capacity.result.stop_reason": lambda c: c.update(
            stop_reason="bracket narrowed to the tolerance!"
        ),
        "load.capacity.result.capacity": lambda c: c.update(capacity=8),
        "load.capacity.result.confirmed": lambda c: c.update(confirmed=False),
    }
    for name, edit in edits.items():
        doc = json.loads(original)
        edit(doc["load"]["capacity"]["result"])
        (out / "factsheet.json").write_text(json.dumps(doc))
        edited = CliRunner().invoke(app, ["validate", str(out / "factsheet.json")])
        assert edited.exit_code == 1 and name in edited.output, f"{name}: {edited.output}"
