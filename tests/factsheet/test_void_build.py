"""A void or aborted measurement never exits 0 (issue 40 item 2): a target that dies mid-build leaves a written
factsheet whose page 1 says so, every point's requests accounted for, and exit 1 with one line."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time

import httpx
import pytest
from aiohttp import web
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.targets.mock_server import MockServerConfig, Received, build_app
from probes.targets.ports import free_port

pytestmark = pytest.mark.system  # a server process

DIES_AFTER = 30  # generation requests the server answers before its process ends


def _serve_then_die(port: int) -> None:
    received: list[Received] = []

    def watch() -> None:
        while len(received) < DIES_AFTER:
            time.sleep(0.01)
        os._exit(0)  # gone mid-stream, as a crashed server: no response ends, no socket closes cleanly

    threading.Thread(target=watch, daemon=True).start()
    application = build_app(MockServerConfig(ttft_ms=10, itl_ms=2), recorder=received)
    web.run_app(application, host="127.0.0.1", port=port, access_log=None, print=None)


def _start(port: int) -> multiprocessing.Process:
    proc = multiprocessing.get_context("spawn").Process(target=_serve_then_die, args=(port,), daemon=True)
    proc.start()
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=0.5)
            return proc
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("mock server did not come up") from None
            time.sleep(0.05)


def test_a_target_dying_mid_build_exits_1_and_page_1_says_so(tmp_path, endpoint_spec):
    port = free_port()
    proc = _start(port)
    try:
        overrides = {"load": {"request_timeout_s": 5}}
        spec = endpoint_spec(tmp_path, f"http://127.0.0.1:{port}", points=((2, 400),), overrides=overrides)
        result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    finally:
        proc.kill()
        proc.join(5)
    assert result.exit_code == 1, result.output
    assert "the measurement is void: target lost mid-run" in result.output
    doc = json.loads((tmp_path / "out" / "factsheet.json").read_text())
    assert doc["headline"]["void"].startswith("target lost mid-run: load point concurrency=2")
    res = doc["load"]["points"][0]["result"]
    counts = res["requests"]
    assert counts["planned"] == 400 and counts["sent"] + counts["never_sent"] == 400
    assert counts["never_sent"] > 300 and counts["sent"] < DIES_AFTER + 10
    assert counts["completed"] + counts["truncated"] + counts["failed"] == counts["sent"]
    assert 0 < counts["completed"] <= DIES_AFTER and res["stop_reason"] == "target_unreachable"
    # What was measured is a valid document of a void measurement: validate re-derives it, void line too.
    check = CliRunner().invoke(app, ["validate", str(tmp_path / "out" / "factsheet.json")])
    assert check.exit_code == 0, check.output


def test_a_build_where_nothing_completed_exits_1_and_page_1_says_so(tmp_path, endpoint_spec):
    """Every reply ends at EOS after 2 tokens although EOS was to be ignored: answered, never completed."""
    from probes.targets.mock_server import running

    server = MockServerConfig(ttft_ms=5, itl_ms=1, eos_after=2, honours_ignore_eos=False)
    with running(server) as url:
        overrides = {"target": {"supports_ignore_eos": True}}
        spec = endpoint_spec(tmp_path, url, points=((2, 6),), overrides=overrides)
        result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert "the measurement is void: nothing completed" in result.output
    doc = json.loads((tmp_path / "out" / "factsheet.json").read_text())
    assert doc["headline"]["void"] == (
        "nothing completed: 0 of 6 measured requests of 1 load point(s) completed (6 truncated, 0 failed)"
    )
    assert doc["load"]["points"][0]["result"]["requests"] == {
        "planned": 6, "sent": 6, "completed": 0, "truncated": 6, "failed": 0, "never_sent": 0,
    }  # fmt: skip
    assert doc["load"]["points"][0]["result"]["metrics"]["finish_reasons"] == {"stop": 6}
