"""Where the suite's CPU goes: `pytest -p tests.support.cpu_ledger` (with or without xdist) ends with the test
files that used the most CPU, each with its wall time summed over its tests.

On 2 cores the suite is bound by CPU, not by waiting (issue 39), so a test's wall time alone misleads: a test
that waits on the mock server's known timing costs the other worker little. A test's CPU here is its own
process's (user + system, setup to teardown) plus that of its child processes reaped meanwhile (the CLI
processes, a server stopped by its fixture, the CLI children tests/support/cli_process.py forks); a daemon
the test does not reap (Ray's) is not counted. Each worker appends one line per test to a file of its own;
the controller reads them all at the end.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pytest

# A folder given here is kept; one this module makes is removed at the end.
FOLDER_ENV = "FACTSHEET_CPU_LEDGER"
SHOWN = 25
_made: list[str] = []


def _cpu_s() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    forked = sys.modules.get("tests.support.cli_process")  # CLI children its server reaped, not this process
    extra = forked.children_cpu_s[0] if forked is not None else 0.0
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime + extra


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and FOLDER_ENV not in os.environ:
        os.environ[FOLDER_ENV] = tempfile.mkdtemp(prefix="factsheet-cpu-ledger-")  # the workers inherit it
        _made.append(os.environ[FOLDER_ENV])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    start, wall0, (own0, children0) = time.time(), time.monotonic(), _cpu_s()
    yield
    wall1, (own1, children1) = time.monotonic(), _cpu_s()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    row = {
        "id": item.nodeid,
        "start": start,  # when, on which worker: the run's timeline (a kept folder, FACTSHEET_CPU_LEDGER)
        "wall_s": wall1 - wall0,
        "own_s": own1 - own0,
        "children_s": children1 - children0,
    }
    with (Path(os.environ[FOLDER_ENV]) / f"{worker}.jsonl").open("a") as f:
        f.write(json.dumps(row) + "\n")


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    folder = Path(os.environ[FOLDER_ENV])
    rows = [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.open()]
    files: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for row in rows:
        acc = files[row["id"].split("::", 1)[0]]
        acc[0] += 1
        acc[1] += row["wall_s"]
        acc[2] += row["own_s"] + row["children_s"]
        acc[3] += row["children_s"]
    write = terminalreporter.write_line
    write(f"cpu ledger: {len(rows)} tests, {sum(a[1] for a in files.values()):.0f} s of wall summed, "
          f"{sum(a[2] for a in files.values()):.0f} s of CPU (own + reaped children)")  # fmt: skip
    write("  cpu s  children s  wall s  tests  file")
    for name, (n, wall, cpu, children) in sorted(files.items(), key=lambda kv: -kv[1][2])[:SHOWN]:
        write(f"{cpu:7.1f}  {children:10.1f}  {wall:6.1f}  {n:5d}  {name}")
    if str(folder) in _made:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(FOLDER_ENV, None)
