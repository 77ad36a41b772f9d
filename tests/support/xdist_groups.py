"""Groups of tests under pytest-xdist (`make test`: `-n 2 --dist loadgroup`): a worker takes a group whole.

pytest-xdist's own `loadgroup` tags each node id with its group (`item._nodeid = ...@group`), which pytest 9.2's
node ids (a property over `Node._id`) no longer take: the groups were silently dropped and two real-vLLM builds
ran at once (ced406e). Here the workers, which collect, write each test's group to a file the controller's
scheduler reads (the controller collects nothing); the scheduler is xdist's own by-scope one with the group as
the scope. Each worker writes the same map (the collection is the same on every worker, which xdist checks).
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


def publish(config: pytest.Config, groups: dict[str, str]) -> None:
    """On a worker: each collected node id's group, written whole (aside, then renamed)."""
    path = os.environ.get(GROUPS_ENV)
    if path is None or not hasattr(config, "workerinput"):
        return
    aside = f"{path}.{config.workerinput['workerid']}"
    Path(aside).write_text(json.dumps(groups))
    os.replace(aside, path)


def make_scheduler(config: pytest.Config, log):
    """`--dist loadgroup` with the groups the workers wrote; None (xdist's own) otherwise."""
    if config.getoption("dist", "no") != "loadgroup" or GROUPS_ENV not in os.environ:
        return None
    from xdist.scheduler import LoadScopeScheduling  # deferred: xdist is needed only when asked for

    class GroupScheduling(LoadScopeScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # read once: every worker has collected before the first split
                self.groups = json.loads(Path(os.environ[GROUPS_ENV]).read_text())
            return self.groups.get(nodeid) or nodeid.split("::", 1)[0]

    return GroupScheduling(config, log)
