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
from tests.support.mock_spec import endpoint_spec_dict
from tests.support.spec_builder import DELETE, write_spec

pytestmark = pytest.mark.system

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


def _sessions_spec(url: str, point: dict) -> dict:
    load = {
        "points": [point],
        "endpoint": "chat", "input_len": DELETE, "output_len": 4, "workers": 2,
        "slo": {"ttft_ms": 500, "tpot_ms": DELETE},
        "workload": {"profile": "chat-sessions", "system_prompt_len": 8, "turns_min": 3, "turns_max": 3,
                     "user_turn_len": 8},
    }  # fmt: skip
    return endpoint_spec_dict(url, overrides={"name": "mock-sessions", "load": load})


@pytest.mark.skipif(host_cores() < 2, reason="needs two cores")
def test_chat_sessions_from_two_workers_build_and_validate(tmp_path, mock_url):
    spec = tmp_path / "model.yaml"
    write_spec(spec, _sessions_spec(mock_url, {"concurrency": 2, "num_requests": 18}))
    out = tmp_path / "out"
    res = runner.invoke(app, ["build", str(spec), "-o", str(out)])
    assert res.exit_code == 0, res.output
    point = json.loads((out / "factsheet.json").read_text())["load"]["points"][0]
    assert point["result"]["metrics"]["completed"] == 18 and point["result"]["client"]["workers"] == 2
    assert [t["sent"] for t in point["result"]["turns"]] == [6, 6, 6]  # 6 sessions of 3 turns
    records = load_records((out / point["records"]["path"]).read_bytes())
    assert {r.worker for r in records} == {0, 1}
    workers_of = {}
    for r in records:
        workers_of.setdefault(r.session, set()).add(r.worker)
    assert len(workers_of) == 6 and all(len(w) == 1 for w in workers_of.values())
    # validate re-derives every figure, the ones by turn included, from the merged records
    res = runner.invoke(app, ["validate", str(out / "factsheet.json")])
    assert res.exit_code == 0, res.output


def test_fewer_chat_sessions_than_workers_is_exit_2_before_anything_is_sent(tmp_path):
    seen: list[Received] = []
    with running(MockServerConfig(ttft_ms=1, itl_ms=1), recorder=seen) as url:
        spec = tmp_path / "model.yaml"
        # open loop (a closed loop's users, at least one a worker, already need a session each): one session
        write_spec(spec, _sessions_spec(url, {"rate": 5, "num_requests": 3}))
        res = runner.invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert "2 workers for 1 chat sessions" in res.output and len(res.output.strip().splitlines()) == 1
    assert seen == []
