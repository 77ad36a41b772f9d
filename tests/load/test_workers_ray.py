"""`load.executor: ray`: the workers as Ray actors on a local two-node cluster the test starts on this host.
Both nodes read one clock, so the true offset is 0: each measured offset must lie within its stated
uncertainty (plus the clock's read jitter)."""

from __future__ import annotations

import asyncio
import os

import pytest
from typer.testing import CliRunner

from factsheet.cli.probe import probe_app
from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.load.workers import WorkersError
from probes.load.workers.ray_fleet import check_address
from probes.load.workloads.profiles import ChatSessionsProfile
from probes.targets.mock_server import MockServerConfig, Received, running
from probes.targets.ports import free_port

CHAT = ChatSessionsProfile(system_prompt_len=8, turns_min=2, turns_max=3, user_turn_len=6, output_len=2)


# One local Ray cluster at a time on the host: the two Ray files share a worker (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("local-ray")


def test_an_unreachable_ray_address_is_refused_in_seconds():
    with pytest.raises(WorkersError, match="ray_address: cannot reach"):
        check_address(f"127.0.0.1:{free_port()}")
    with pytest.raises(WorkersError, match="is not host:port"):
        check_address("nowhere")


@pytest.mark.slow  # a two-node Ray cluster takes ~40 s to start on the 2-core host
def test_two_actors_on_two_nodes_one_measurement(monkeypatch):
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    monkeypatch.setenv("PYTHONPATH", os.getcwd())  # the nodes' workers import this checkout
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, log_to_driver=False)
        point = LoadPoint.at(concurrency=4, num_requests=16, output_len=4)
        chat = LoadPoint.at(concurrency=2, num_requests=16, output_len=2, endpoint="chat")
        with running(MockServerConfig(ttft_ms=50, itl_ms=5)) as url:
            r = asyncio.run(run_point(url, "mock-model", point, SLO(), workers=2, executor="ray"))
            # chat sessions on the nodes: no counter is shared, each actor runs every other session, whole
            sessions = asyncio.run(
                run_point(url, "mock-model", chat, SLO(), profile=CHAT, workers=2, executor="ray")
            )
            alone = asyncio.run(run_point(url, "mock-model", chat, SLO(), profile=CHAT))
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert r.metrics.completed == 16 and [x.index for x in r.records] == list(range(16))
    assert {x.worker for x in r.records} == {0, 1}
    c = r.client
    assert c.executor == "ray" and len({o.node for o in c.clock_offsets}) == 2
    for o in c.clock_offsets:
        assert abs(o.offset_ms) <= o.uncertainty_ms + 1.0, o
    assert 50.0 <= r.metrics.ttft_ms.p(50) < 50.0 + 25.0
    assert [(x.index, x.session, x.turn) for x in sessions.records] == [
        (x.index, x.session, x.turn) for x in alone.records
    ]
    assert all(x.worker == x.session % 2 for x in sessions.records) and sessions.metrics.completed == 16
    assert sessions.workload.requests_digest == alone.workload.requests_digest  # the actors' logged bodies
    assert sessions.turns is not None and len(sessions.turns) == len(alone.turns)


@pytest.mark.parametrize(
    ("args", "needle"),
    [(["--executor", "ray", "--ray-address", "127.0.0.1:{port}", "--workers", "2"], "ray_address: cannot reach"),
     (["--executor", "ray", "--workers", "auto"], "with executor ray give a number")],
)  # fmt: skip
def test_probe_load_ray_bad_input_is_one_line_exit_2_before_anything_is_sent(tmp_path, args, needle):
    seen: list[Received] = []
    args = [a.format(port=free_port()) for a in args]
    with running(MockServerConfig(ttft_ms=1, itl_ms=1), recorder=seen) as url:
        res = CliRunner().invoke(probe_app, ["load", "--base-url", url, "--model", "mock-model", "--concurrency",
                                             "2", *args, "-o", str(tmp_path / "o")])  # fmt: skip
    assert res.exit_code == 2, res.output
    assert needle in res.output and len(res.output.strip().splitlines()) == 1
    assert seen == [] and not (tmp_path / "o").exists()
