"""A capacity probe passes only when its client check is valid (schema 1.9.0, issue 31 item 1): a closed loop
whose client fell behind by its event loop's lag is client-bound, though the arrivals rule (an open loop's)
says nothing of it. Known truth: a build's search against the mock server, the client's event loop blocked
100 ms of every 200 ms at concurrency 4 and above and left quiet below; validate replays the verdicts from
the client checks the probes state, and an edited verdict or check is caught; a 1.8.0 document, whose probes
state no check, is judged by the arrivals rule alone, as before."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.load import capacity as capacity_module
from probes.load.capacity import PASS_RULE
from probes.targets.mock_server import MockServerConfig, running
from tests.load.loadharness import block_the_loop
from tests.support.mock_spec import e2el_slo

# TTFT 300 ms: the client-bound rule's resolution is 5 % of it, 15 ms, far above a quiet loop's lag (under
# 1 ms; a few ms on a loaded 2-core host) and far below the 100 ms stall. The E2EL threshold (2 s) is far
# above any run's E2EL (300 + 7 x 5 ms, the stall adding at most 100 ms), so only the client check fails one.
TTFT_MS, ITL_MS = 300.0, 5.0
STALLED_FROM = 4  # the client's loop is blocked at this concurrency and above
# Doubling from 1 passes 1 and 2 and fails 4 (stalled); bisection passes 3: the capacity is 3, the bracket
# (3, 4). Without the stall every value up to 8 passes.
CAPACITY = {"knob": "concurrency", "start": 1, "max_value": 8, "num_requests": 8}


def _build(tmp_path: Path, endpoint_spec, monkeypatch, stalled: bool) -> Path:
    real = capacity_module.run_point

    async def run_point(base_url, model, point, slo, **kw):
        stall = None
        if stalled and point.concurrency >= STALLED_FROM:
            stall = asyncio.create_task(block_the_loop())
        try:
            return await real(base_url, model, point, slo, **kw)
        finally:
            if stall is not None:
                stall.cancel()

    # the search's own runner (point_runner) calls capacity.run_point: the load points are left alone
    monkeypatch.setattr(capacity_module, "run_point", run_point)
    with running(MockServerConfig(model="mock-model", ttft_ms=TTFT_MS, itl_ms=ITL_MS)) as url:
        overrides = {"load": {"slo": e2el_slo(2000), "capacity": CAPACITY}}
        spec = endpoint_spec(tmp_path, url, points=((1, 4),), overrides=overrides)
        result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    return tmp_path / "out" / "factsheet.json"


def _validate(path: Path, doc: dict) -> tuple[int, str]:
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(app, ["validate", str(path)])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def stalled(tmp_path_factory, endpoint_spec):
    with pytest.MonkeyPatch.context() as mp:
        return _build(tmp_path_factory.mktemp("stalled"), endpoint_spec, mp, stalled=True)


def test_a_probe_whose_loop_fell_behind_does_not_pass_and_validate_agrees(stalled):
    doc = json.loads(stalled.read_text())
    assert doc["schema_version"] == "1.9.0"
    cap = doc["load"]["capacity"]["result"]
    assert cap["pass_rule"] == PASS_RULE and "loop lag" in PASS_RULE
    by_value = {p["value"]: p for p in cap["points"]}
    assert [p["value"] for p in cap["points"]] == [1, 2, 4, 3]
    for value, p in by_value.items():
        client = p["client"]
        assert client["workers"] == 1 and client["per_worker"][0]["worker"] == 0
        if value < STALLED_FROM:
            assert p["passed"] and not client["client_bound"], (value, p["reasons"])
        else:
            # the stall, read back: the lag's p99 is a timer that waited out a stall (less up to two ticks)
            assert client["loop_lag_ms"]["percentiles"]["p99"] >= 80, client["loop_lag_ms"]
            assert not p["passed"] and client["client_bound"]
            # failed by its client alone: the latency held, and a closed loop has no arrivals rule
            assert p["p99_ms"] < 2000 and len(p["reasons"]) == 1, p["reasons"]
            assert p["reasons"][0].startswith("client-bound: worker 0: loop lag p99 "), p["reasons"]
    assert cap["capacity"] == 3 and cap["bracket"] == [3, 4]
    assert cap["stop_reason"] == "bracket narrowed to the tolerance"
    code, output = _validate(stalled, doc)
    assert code == 0, output


def test_an_edited_pass_or_client_check_is_caught(stalled):
    original = stalled.read_text()
    i = 2  # the probe at 4, failed by its client
    edits = [
        # a failed probe's pass flipped by hand: the replay fails it again
        (lambda p: p.update(passed=True, reasons=[]), f"load.capacity.result.points[{i}].passed"),
        # its client check edited to valid while its verdict is kept: its own stated lag says otherwise, and
        # the replay passes 4 and doubles to 8, where the build bisected to 3
        (lambda p: p["client"].update(client_bound=False, client_bound_reasons=[]),
         f"load.capacity.result.points[{i}].client.client_bound"),
        (lambda p: p["client"].update(client_bound=False, client_bound_reasons=[]),
         "load.capacity.result.points[3].value"),
        # its client check dropped (1.9.0 has no older rule to hide behind)
        (lambda p: p.pop("client"), f"load.capacity.result.points[{i}].client:"),
    ]  # fmt: skip
    for edit, name in edits:
        doc = json.loads(original)
        edit(doc["load"]["capacity"]["result"]["points"][i])
        code, output = _validate(stalled, doc)
        assert code == 1 and name in output, f"{name}: {output}"
    stalled.write_text(original)


def test_a_1_8_0_document_is_judged_by_the_arrivals_rule_alone(stalled):
    """Relabelled 1.8.0 without the checks its probes could not state: the probe at 4 is replayed by the
    arrivals rule alone (a closed loop has none), so it passes and the replay doubles to 8 where the build
    bisected to 3: 1.8.0's rule, unchanged; no probe is asked for a check."""
    original = stalled.read_text()
    doc = json.loads(original)
    doc["schema_version"] = "1.8.0"
    for p in doc["load"]["capacity"]["result"]["points"]:
        p.pop("client")
    code, output = _validate(stalled, doc)
    assert code == 1 and "load.capacity.result.points[3].value" in output, output
    assert "client:" not in output  # no check asked of a 1.8.0 probe
    stalled.write_text(original)


def test_a_quiet_client_passes_every_value_at_1_8_0_as_at_1_9_0(tmp_path, endpoint_spec, monkeypatch):
    path = _build(tmp_path, endpoint_spec, monkeypatch, stalled=False)
    doc = json.loads(path.read_text())
    cap = doc["load"]["capacity"]["result"]
    assert [p["value"] for p in cap["points"]] == [1, 2, 4, 8] and cap["capacity"] == 8
    assert all(p["passed"] and not p["client"]["client_bound"] for p in cap["points"])
    code, output = _validate(path, doc)
    assert code == 0, output
    doc["schema_version"] = "1.8.0"
    for p in cap["points"]:
        p.pop("client")
    code, output = _validate(path, doc)
    assert code == 0, output


def test_a_load_points_client_check_is_recomputed_but_for_its_loop_lag(stalled):
    """Every run states its client check from 1.9.0, a one-worker sweep point too: validate recomputes it from
    the records (the write delay, the verdict and its reasons), holding each worker's loop lag as stated."""
    original = stalled.read_text()
    doc = json.loads(original)
    client = doc["load"]["points"][0]["result"]["client"]
    assert client["workers"] == 1 and not client["client_bound"]
    assert client["write_delay_ms"]["n"] == doc["load"]["points"][0]["result"]["sent"]
    at = "load.points[0].result.client"
    edits = [
        (lambda c: c["write_delay_ms"].update(mean=c["write_delay_ms"]["mean"] + 50), f"{at}.write_delay_ms"),
        (
            lambda c: c.update(client_bound=True, client_bound_reasons=["worker 0: made up"]),
            f"{at}.client_bound",
        ),
        (lambda c: c["per_worker"][0].update(client_bound=True), f"{at}.per_worker[0].client_bound"),
        # a lag edited past the rule while the verdict is kept: the verdict follows the lag as stated
        (
            lambda c: c["per_worker"][0]["loop_lag_ms"]["percentiles"].update(p99=10_000.0),
            f"{at}.client_bound",
        ),
    ]
    for edit, name in edits:
        doc = json.loads(original)
        edit(doc["load"]["points"][0]["result"]["client"])
        code, output = _validate(stalled, doc)
        assert code == 1 and name in output, f"{name}: {output}"
    doc = json.loads(original)
    doc["load"]["points"][0]["result"].pop("client")
    code, output = _validate(stalled, doc)
    assert code == 1 and f"{at}:" in output, output
    stalled.write_text(original)
