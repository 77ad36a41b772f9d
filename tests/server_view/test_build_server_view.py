"""The server view in a factsheet build against the mock server: scrapes kept as bound records, every figure
re-derived by `validate` (an edited scrape or a swapped scrapes file is named), the capacity search failing
a saturated probe without waiting for its full count, and a bad /metrics page stopping the build (exit 2)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.schema import SCHEMA_VERSION
from factsheet.rederive import rederive
from factsheet.rederive.validate import load_factsheet
from probes.core.digests import sha256_bytes
from probes.targets.mock_server import MockServerConfig, running
from tests.support import mock_spec

pytestmark = pytest.mark.system

VIEW = {"interval_s": 0.1, "stop_when_saturated": True}
runner = CliRunner()


def _build(tmp_path, url: str, points=((2, 8), (4, 12))):
    spec = mock_spec.endpoint_spec(tmp_path, url, points=points, overrides={"load": {"server_view": VIEW}})
    return runner.invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])


def test_build_keeps_scrapes_and_validate_rederives_them(tmp_path):
    cfg = MockServerConfig(
        model="mock-model", ttft_ms=40, itl_ms=5, slots=2, metrics=True, prefix_hit_fraction=0.5
    )
    with running(cfg) as url:
        result = _build(tmp_path, url)
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    doc = json.loads((out / "factsheet.json").read_text())
    assert doc["schema_version"] == SCHEMA_VERSION
    second = doc["load"]["points"][1]
    view = second["result"]["server_view"]
    assert view["running"]["max"] == 2 and view["waiting"]["max"] == 2  # 4 users, 2 slots
    assert view["prefix_cache_hit_rate"]["value"] == 0.5  # 16-word prompts, half found cached
    assert second["result"]["saturation"]["over_saturated"] is False
    path = out / second["server_records"]["path"]
    assert path.name == "load-02-metrics.jsonl"
    assert runner.invoke(app, ["validate", str(out / "factsheet.json")]).exit_code == 0
    html = (out / "factsheet.html").read_text()
    assert "Server view" in html and "prefix-cache hit rate" in html.lower()

    # An edited gauge in the scrapes (its digest made to match) is named by validate's re-derivation.
    lines = path.read_bytes().splitlines(keepends=True)
    edited = [lines[0]] + [
        ln.replace(b'"vllm:num_requests_running"', b'"vllm:num_requests_running"', 1) for ln in lines[1:]
    ]
    scrape = json.loads(edited[3])
    for s in scrape["samples"]:
        if s["name"] == "vllm:num_requests_running":
            s["value"] = 9.0
    edited[3] = json.dumps(scrape).encode() + b"\n"
    path.write_bytes(b"".join(edited))
    second["server_records"]["sha256"] = sha256_bytes(path.read_bytes())
    (out / "factsheet.json").write_text(json.dumps(doc))
    found = {d.figure for d in rederive(load_factsheet(out / "factsheet.json"), out)}
    assert "load.points[1].result.server_view.running.max" in found


def test_scrapes_of_another_point_are_refused(tmp_path):
    with running(MockServerConfig(model="mock-model", ttft_ms=20, itl_ms=2, metrics=True)) as url:
        assert _build(tmp_path, url).exit_code == 0
    out = tmp_path / "out"
    doc = json.loads((out / "factsheet.json").read_text())
    first, second = doc["load"]["points"]
    first["server_records"], second["server_records"] = second["server_records"], first["server_records"]
    (out / "factsheet.json").write_text(json.dumps(doc))
    found = {d.figure for d in rederive(load_factsheet(out / "factsheet.json"), out)}
    assert "load.points[0].server_records (the run it was scraped in)" in found


def test_capacity_search_fails_a_saturated_probe_early(tmp_path):
    """20 slots, 2000 + 3 × 20 = 2060 ms a request: 9.7 req/s at most. The probe at 24 req/s grows its queue
    ≈ 14 a second once its 20 slots are full (after 0.8 s) and is stopped well before its 80 requests (3.3 s of
    sending); 12 req/s fails too (its queue adds seconds);
    6 req/s (62 % busy, Poisson arrivals: next to no queue) passes and is confirmed, and the confirmation run's KV
    usage and queue are charted. (Latencies of seconds keep a busy host's send lag, up to ~60 ms seen on a
    loaded 2-core host, below the client-bound rule's 5 %.)"""
    capacity = {
        "knob": "rate", "start": 24, "max_value": 64, "num_requests": 80, "max_points": 3,
        "confirm_requests": 24, "max_confirmations": 1,
    }  # fmt: skip
    cfg = MockServerConfig(model="mock-model", ttft_ms=2000, itl_ms=20, slots=20, metrics=True)
    with running(cfg) as url:
        load = {"slo": mock_spec.e2el_slo(2500), "output_len": 4, "server_view": VIEW, "capacity": capacity}
        spec = mock_spec.endpoint_spec(tmp_path, url, points=((1, 4),), overrides={"load": load})
        result = runner.invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    doc = json.loads((out / "factsheet.json").read_text())
    cap = doc["load"]["capacity"]
    saturated = cap["result"]["points"][0]
    assert saturated["value"] == 24 and not saturated["passed"]
    assert saturated["stopped_early"].startswith("over-saturated")
    assert any(r.startswith("over-saturated") for r in saturated["reasons"])
    assert cap["records"][0]["records"] < 70 and cap["server_records"][0] is not None
    assert cap["result"]["capacity"] == 6 and cap["result"]["confirmed"] is True, cap["result"]["points"]
    assert runner.invoke(app, ["validate", str(out / "factsheet.json")]).exit_code == 0
    html = (out / "factsheet.html").read_text()
    assert "Server view of the capacity confirmation run (rate 6)" in html
    assert "Over-saturated: </strong>at capacity probe: rate 24" in html


def test_build_refuses_a_page_that_is_not_prometheus_text(tmp_path):
    with running(
        MockServerConfig(model="mock-model", ttft_ms=10, itl_ms=1, metrics_text="<html>proxy</html>")
    ) as url:
        result = _build(tmp_path, url)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "/metrics: not Prometheus text" in errors[0]  # one line naming the cause
    assert not (tmp_path / "out").exists()
