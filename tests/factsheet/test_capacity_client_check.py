"""Every capacity run states its client check (schema 1.9.0, issue 31 item 1), beside its verdict and not
judged by it (probes.load.capacity.PASS_RULE says why: the lag rule's resolution is 5 % of a fast server's
TTFT, below a sampler's own noise). Known truth: a build's search against the mock server, the client's event
loop blocked 100 ms of every 200 ms at concurrency 4 and above and left quiet below: the stalled probes are
flagged client-bound by their loop lag, the verdicts are the arrivals rule's, as before; validate recomputes
each check from the records but for the lag, and an edited verdict or check is caught; a 1.8.0 document,
whose probes state no check, is asked for none."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.schema import SCHEMA_VERSION
from probes.core.digests import sha256_bytes, sha256_json
from probes.load import capacity as capacity_module
from probes.load.capacity import PASS_RULE
from probes.targets.mock_server import MockServerConfig, running
from tests.load.loadharness import block_the_loop
from tests.support.mock_spec import e2el_slo
from tests.support.trees import drop_keys

# TTFT 300 ms: the client-bound rule's resolution is 5 % of it, 15 ms, far above a quiet loop's lag (under
# 1 ms; a few ms on a loaded 2-core host) and far below the 100 ms stall. The E2EL threshold (2 s) is far
# above any run's E2EL (300 + 7 x 5 ms, the stall adding at most 100 ms), so only the client check fails one.
TTFT_MS, ITL_MS = 300.0, 5.0
STALLED_FROM = 4  # the client's loop is blocked at this concurrency and above
# Doubling from 1 passes 1, 2, 4 (stalled: flagged, not failed) and 8: the capacity is 8, as without the stall.
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


def test_a_probe_whose_loop_fell_behind_is_flagged_beside_its_verdict(stalled):
    doc = json.loads(stalled.read_text())
    assert doc["schema_version"] == SCHEMA_VERSION
    cap = doc["load"]["capacity"]["result"]
    assert cap["pass_rule"] == PASS_RULE and "arrivals rule" in PASS_RULE and "not judged" in PASS_RULE
    assert [p["value"] for p in cap["points"]] == [1, 2, 4, 8]
    for p in cap["points"]:
        client = p["client"]
        assert client["workers"] == 1 and client["per_worker"][0]["worker"] == 0
        assert p["passed"] and p["reasons"] == [], (p["value"], p["reasons"])  # the latency held everywhere
        if p["value"] < STALLED_FROM:
            assert not client["client_bound"], (p["value"], client["client_bound_reasons"])
        else:
            # the stall, read back: the lag's p99 is a timer that waited out a stall (less up to two ticks)
            assert client["loop_lag_ms"]["percentiles"]["p99"] >= 80, client["loop_lag_ms"]
            assert client["client_bound"]
            assert client["client_bound_reasons"][0].startswith("worker 0: loop lag p99 "), client
    assert cap["capacity"] == 8
    code, output = _validate(stalled, doc)
    assert code == 0, output


def test_an_edited_pass_or_client_check_is_caught(stalled):
    original = stalled.read_text()
    i = 2  # the probe at 4, flagged client-bound
    at = f"load.capacity.result.points[{i}]"
    edits = [
        # a probe's verdict edited by hand: the replay judges it again
        (lambda p: p.update(passed=False, reasons=["made up"]), f"{at}.passed"),
        # its client check edited to valid: its own stated lag says otherwise
        (lambda p: p["client"].update(client_bound=False, client_bound_reasons=[]), f"{at}.client.client_bound"),
        # the write delay is the records': edited, it is named
        (lambda p: p["client"]["write_delay_ms"].update(mean=1e4), f"{at}.client.write_delay_ms"),
        # its client check dropped (1.9.0: every run states one)
        (lambda p: p.pop("client"), f"{at}.client:"),
    ]  # fmt: skip
    for edit, name in edits:
        doc = json.loads(original)
        edit(doc["load"]["capacity"]["result"]["points"][i])
        code, output = _validate(stalled, doc)
        assert code == 1 and name in output, f"{name}: {output}"
    stalled.write_text(original)


def _as_written_at_1_8_0(path: Path, doc: dict) -> None:
    """The build as a 1.8.0 tool wrote it (a relabel alone is refused: the records name their writer): each
    header names no writer's schema and binds no repeats, no record states its outcome, no figure of outcomes
    is stated, no rule ids are stated, and each file's digest is restated."""
    renamed: dict[str, str] = {}
    load = doc["load"]
    runs = [*load["points"], *({"records": r} for r in load["capacity"]["records"])]
    runs += [{"records": r} for r in load["capacity"].get("server_records") or [] if r]
    runs += [{"records": p["server_records"]} for p in load["points"] if p.get("server_records")]
    for rec in (r["records"] for r in runs):
        file = path.parent / rec["path"]
        head, *lines = file.read_text().splitlines()
        header = json.loads(head)["header"]
        header.pop("schema_version", None)
        context = header["context"]
        context.pop("repeats", None)
        if "run" in context:
            context["run"] = renamed.get(context["run"], context["run"])
        renamed[header["context_sha256"]] = header["context_sha256"] = sha256_json([context])
        rows = [{k: v for k, v in json.loads(x).items() if k != "outcome"} for x in lines]
        data = "".join(json.dumps(x) + "\n" for x in [{"header": header}, *rows]).encode()
        file.write_bytes(data)
        rec["sha256"] = sha256_bytes(data)
    drop_keys(doc, {"finish_reasons", "output_tokens_sources"})
    doc.pop("rules")
    doc["schema_version"] = "1.8.0"


def test_a_1_8_0_document_is_asked_for_no_check(stalled, tmp_path):
    """Written at 1.8.0, without the checks its probes could not state: the verdicts replay as they are, and
    no probe or point is asked for a check."""
    shutil.copytree(stalled.parent, tmp_path / "out")
    stalled = tmp_path / "out" / stalled.name
    original = stalled.read_text()
    doc = json.loads(original)
    _as_written_at_1_8_0(stalled, doc)
    for p in doc["load"]["capacity"]["result"]["points"]:
        p.pop("client")
    # an older tool's words for its pass rule (1.8.0's differ from 1.9.0's): attested, not held to this tool's
    doc["load"]["capacity"]["result"]["pass_rule"] = (
        "p99 ≤ threshold, the run not client-bound (1.8.0's words)"
    )
    code, output = _validate(stalled, doc)
    assert code == 0, output
    stalled.write_text(original)


def test_a_quiet_client_passes_every_value_at_1_8_0_as_at_1_9_0(tmp_path, endpoint_spec, monkeypatch):
    path = _build(tmp_path, endpoint_spec, monkeypatch, stalled=False)
    doc = json.loads(path.read_text())
    cap = doc["load"]["capacity"]["result"]
    assert [p["value"] for p in cap["points"]] == [1, 2, 4, 8] and cap["capacity"] == 8
    assert all(p["passed"] and not p["client"]["client_bound"] for p in cap["points"])
    code, output = _validate(path, doc)
    assert code == 0, output
    _as_written_at_1_8_0(path, doc)
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
