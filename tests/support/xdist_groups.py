"""Groups of tests under pytest-xdist (`make test`: `-n 2 --dist loadgroup`): a worker takes a group whole.

pytest-xdist's own `loadgroup` tags each node id with its group (`item._nodeid = ...@group`), which pytest 9.2's
node ids (a property over `Node._id`) no longer take: the groups were silently dropped and two real-vLLM builds
ran at once (ced406e). Here the workers, which collect, write each test's group to a file the controller's
scheduler reads (the controller collects nothing); the scheduler is xdist's own by-scope one with the group as
the scope. Each worker writes the same map (the collection is the same on every worker, which xdist checks).

Paced groups (every test marked `paced`: its time is mostly waiting on a server of known timing, not CPU) go
beside the real servers: the worker that runs the serving group takes the other groups in order after it, paced
ones last; every other worker takes the paced groups first. So each real server runs beside a test that mostly
waits, and the CPU-bound groups run beside each other once the servers are done. (Handing the paced groups out
last, to a third worker as well, made the CPU-bound groups run beside the servers: every one slower, the host's
CPU-seconds 22 % more, the tests 1,384 s against 1,215 s.)
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

GROUPS_ENV = "FACTSHEET_TEST_GROUPS"


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
    """On a worker: each collected node id's group, the paced groups and the serving group, written whole
    (aside, then renamed)."""
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

        def _next_scope(self, node) -> str | None:
            """The group this worker takes next: the serving group if it is still to be handed out; for the
            worker that ran it, the first group not paced, else the first; for the others, the first paced
            group, else the first."""
            queue, first = list(self.workqueue), self._read()["first"]
            if not queue or first in queue:
                return queue[0] if queue else None
            paced = set(self._read()["paced"])
            serving = first in self.assigned_work.get(node, {})
            return next((scope for scope in queue if (scope in paced) != serving), queue[0])

        def _assign_work_unit(self, node) -> None:
            scope = self._next_scope(node)
            if scope is None:
                return
            work_unit = self.workqueue.pop(scope)
            self.assigned_work.setdefault(node, {})[scope] = work_unit
            collection = self.registered_collections[node]
            node.send_runtest_some([collection.index(i) for i, done in work_unit.items() if not done])

    return GroupScheduling(config, log)
