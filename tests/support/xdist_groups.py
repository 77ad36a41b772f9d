"""Groups of tests under pytest-xdist (`make test`: `-n 2 --dist loadgroup`): a worker takes a group whole.

pytest-xdist's own `loadgroup` tags each node id with its group (`item._nodeid = ...@group`), which pytest 9.2's
node ids (a property over `Node._id`) no longer take: the groups were silently dropped and two real-vLLM builds
ran at once (ced406e). Here the workers, which collect, write each test's group to a file the controller's
scheduler reads (the controller collects nothing); the scheduler is xdist's own by-scope one with the group as
the scope. Each worker writes the same map (the collection is the same on every worker, which xdist checks).

Paced groups (every test marked `paced`: its time is mostly waiting on a server of known timing, not CPU) are
handed out last. The first `CPU_WORKERS` workers take groups in order; a worker beyond them takes only paced
groups, and only once no other group is left to hand out and the serving group has finished: the suite's
waiting then overlaps on three workers, while every CPU-bound group ran on two (a third CPU-bound worker starved
the timed builds beside a busy core: 5 failed). Two workers (`make check`) never see the difference.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

GROUPS_ENV = "FACTSHEET_TEST_GROUPS"
CPU_WORKERS = 2


def start(config: pytest.Config) -> None:
    """On the controller of a `--dist loadgroup` run: the file the workers (started after this, with this
    environment) write the groups into."""
    if hasattr(config, "workerinput") or config.getoption("dist", "no") != "loadgroup":
        return
    folder = tempfile.mkdtemp(prefix="factsheet-test-groups-")
    os.environ[GROUPS_ENV] = str(Path(folder) / "groups.json")
    config.option.loadscopereorder = False  # the workers' collection order is the order groups are handed out


def stop(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and GROUPS_ENV in os.environ:
        shutil.rmtree(Path(os.environ.pop(GROUPS_ENV)).parent, ignore_errors=True)


def publish(config: pytest.Config, groups: dict[str, str], paced: set[str], first: str) -> None:
    """On a worker: each collected node id's group, the paced groups and the group that must finish before a
    paced-only worker starts (the serving group), written whole (aside, then renamed)."""
    path = os.environ.get(GROUPS_ENV)
    if path is None or not hasattr(config, "workerinput"):
        return
    aside = f"{path}.{config.workerinput['workerid']}"
    Path(aside).write_text(json.dumps({"groups": groups, "paced": sorted(paced), "first": first}))
    os.replace(aside, path)


def make_scheduler(config: pytest.Config, log):
    """`--dist loadgroup` with the groups the workers wrote; None (xdist's own) otherwise."""
    if config.getoption("dist", "no") != "loadgroup" or GROUPS_ENV not in os.environ:
        return None
    from xdist.scheduler import LoadScopeScheduling  # deferred: xdist is needed only when asked for

    class GroupScheduling(LoadScopeScheduling):
        published: dict | None = None

        def _read(self) -> dict:
            if self.published is None:  # read once: every worker has collected before the first split
                self.published = json.loads(Path(os.environ[GROUPS_ENV]).read_text())
            return self.published

        def _split_scope(self, nodeid: str) -> str:
            return self._read()["groups"].get(nodeid) or nodeid.split("::", 1)[0]

        def _paced_only(self, node) -> bool:
            return int(node.gateway.id.removeprefix("gw")) >= CPU_WORKERS

        def _next_scope(self, node) -> str | None:
            """The first group in the queue this worker may take now, or None."""
            if not self._paced_only(node):
                return next(iter(self.workqueue), None)
            paced, first = set(self._read()["paced"]), self._read()["first"]
            if any(scope not in paced for scope in self.workqueue):
                return None
            if any(False in work.get(first, {}).values() for work in self.assigned_work.values()):
                return (
                    None  # the serving group still running: its server and a paced build would share the host
                )
            return next(iter(self.workqueue), None)

        def _assign_work_unit(self, node) -> None:
            scope = self._next_scope(node)
            if scope is None:
                return
            work_unit = self.workqueue.pop(scope)
            self.assigned_work.setdefault(node, {})[scope] = work_unit
            collection = self.registered_collections[node]
            node.send_runtest_some([collection.index(i) for i, done in work_unit.items() if not done])

        def mark_test_complete(self, node, item_index: int, duration: float = 0) -> None:
            super().mark_test_complete(node, item_index, duration)
            for other in self.nodes:  # a waiting paced-only worker hears of no test of its own
                if other is not node and self._paced_only(other):
                    self._reschedule(other)

    return GroupScheduling(config, log)
