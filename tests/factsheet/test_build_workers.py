"""`load.workers` in a build: the point is sent by two processes, its records carry the worker, `validate`
re-derives every figure from them as before; a count the host cannot run is refused before anything is sent."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.load.records import load_records
from probes.load.workers import host_cores
from probes.targets.mock_server import MockServerConfig, Received, running
from probes.targets.ports import free_port

runner = CliRunner()


@pytest.mark.skipif(host_cores() < 2, reason="needs two cores")
def test_two_workers_build_and_validate(tmp_path, mock_url, endpoint_spec):
    spec = endpoint_spec(tmp_path, mock_url, "  workers: 2\n", points=((4, 16),))
    out = tmp_path / "out"
    res = runner.invoke(app, ["build", str(spec), "-o", str(out)])
    assert res.exit_code == 0, res.output
    point = json.loads((out / "factsheet.json").read_text())["load"]["points"][0]
    assert point["result"]["metrics"]["completed"] == 16 and point["result"]["client"]["workers"] == 2
    records = load_records((out / point["records"]["path"]).read_bytes())
    assert {r.worker for r in records} == {0, 1}
    res = runner.invoke(app, ["validate", str(out / "factsheet.json")])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    ("extra", "needle"),
    [("  workers: 99999\n", "more than this host can run"), ("  workers: 0\n", "load.workers"),
     ("  executor: ray\n  ray_address: 127.0.0.1:{port}\n", "ray_address: cannot reach")],
)  # fmt: skip
def test_workers_the_host_cannot_run_is_exit_2_before_anything_is_sent(
    tmp_path, endpoint_spec, extra, needle
):
    seen: list[Received] = []
    with running(MockServerConfig(ttft_ms=1, itl_ms=1), recorder=seen) as url:
        spec = endpoint_spec(tmp_path, url, extra.format(port=free_port()))
        res = runner.invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert needle in res.output and len(res.output.strip().splitlines()) == 1
    assert seen == []
