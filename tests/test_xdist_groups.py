"""The suite's scheduler (tests/support/xdist_groups.py) on a known collection: the worker that runs the serving
group takes the CPU-bound groups after it, the other worker the paced groups first, so that the real servers run
beside tests that mostly wait; each test is sent once."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from tests.support import xdist_groups

SERVING = "serving-environment"
PACED = ["paced1.py", "paced2.py", "paced3.py", "paced4.py"]
GROUPS = {"serving": SERVING, "cpu.py": "cpu.py"} | {name: name for name in PACED}
COLLECTION = [f"{file}::t{i}" for file in GROUPS for i in range(4)]


@dataclass(eq=False)
class Node:
    """What the scheduler uses of a worker: its id, the tests sent to it, whether it was told to stop."""

    name: str
    sent: list[str] = field(default_factory=list)
    shutting_down: bool = False

    def __post_init__(self) -> None:
        self.gateway = SimpleNamespace(id=self.name)

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(COLLECTION[i] for i in indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def _scheduler(tmp_path, monkeypatch, workers: int, paced: list[str] = PACED):
    path = tmp_path / "groups.json"
    groups = {nodeid: GROUPS[nodeid.split("::")[0]] for nodeid in COLLECTION}
    path.write_text(json.dumps({"groups": groups, "paced": paced, "first": SERVING}))
    monkeypatch.setenv(xdist_groups.GROUPS_ENV, str(path))
    options = {"dist": "loadgroup", "tx": [f"{workers}*popen"]}
    config = SimpleNamespace(
        getoption=lambda name, default=None: options.get(name, default),
        getvalue=lambda name: options[name],
        option=SimpleNamespace(loadscopereorder=False),
    )
    sched = xdist_groups.make_scheduler(config, None)
    nodes = [Node(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, COLLECTION)
    sched.schedule()
    return sched, nodes


def _finish(sched, node: Node, group: str, leave: int = 0) -> None:
    """Reports the group's tests sent to `node` complete, but for the last `leave` of them."""
    nodeids = [n for n in node.sent if n.startswith(group)]
    for nodeid in nodeids[: len(nodeids) - leave]:
        sched.mark_test_complete(node, COLLECTION.index(nodeid))


def _groups(node: Node) -> list[str]:
    return list(dict.fromkeys(n.split("::")[0] for n in node.sent))


def test_the_paced_groups_run_beside_the_serving_group(tmp_path, monkeypatch):
    sched, (gw0, gw1) = _scheduler(tmp_path, monkeypatch, 2)
    assert _groups(gw0) == ["serving"] and _groups(gw1) == ["paced1.py"]
    _finish(sched, gw1, "paced1.py")
    assert _groups(gw1) == ["paced1.py", "paced2.py"]
    _finish(sched, gw0, "serving")  # the serving worker goes on with the CPU-bound group
    assert _groups(gw0) == ["serving", "cpu.py"]
    _finish(sched, gw0, "cpu.py")  # nothing else CPU-bound: it helps with the paced groups
    _finish(sched, gw1, "paced2.py")
    assert sorted(_groups(gw0)[2:] + _groups(gw1)[2:]) == ["paced3.py", "paced4.py"]
    assert not sched.workqueue


def test_without_paced_groups_the_workers_take_the_groups_in_order(tmp_path, monkeypatch):
    sched, (gw0, gw1) = _scheduler(tmp_path, monkeypatch, 2, paced=[])
    assert _groups(gw0) == ["serving"] and _groups(gw1) == ["cpu.py"]
    _finish(sched, gw1, "cpu.py")
    assert _groups(gw1) == ["cpu.py", "paced1.py"]


@pytest.mark.parametrize("workers", [2, 3])
def test_every_test_is_sent_once(tmp_path, monkeypatch, workers):
    sched, nodes = _scheduler(tmp_path, monkeypatch, workers)
    for _ in range(len(GROUPS)):
        for node in nodes:
            for group in _groups(node):
                _finish(sched, node, group)
    sent = [n for node in nodes for n in node.sent]
    assert sorted(sent) == sorted(COLLECTION)
