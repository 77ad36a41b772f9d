"""The host's own load over a run (issue 28, item 6): CPU of other processes and steal, from /proc.

Known truth, two ways: counters made up for a host whose load is known (a parallel CI worker on one of
2 CPUs is not a busy host; competing processes filling it are); and a live run against the mock server with
and without competing busy loops, one per CPU, started outside the tool's process tree. The live figures
depend on whatever else the shared host runs, so the live test compares the two runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.schema import Factsheet
from factsheet.render.sheet import render_html
from probes.core.measurement import NotMeasured
from probes.hostload import HostLoad, HostLoadMeter, Snapshot, between, snapshot
from probes.targets.mock_server import MockServerConfig, running
from tests.load.loadharness import point, run
from tests.support.mock_spec import e2el_slo, endpoint_spec_dict
from tests.support.spec_builder import write_spec

pytestmark = pytest.mark.system

runner = CliRunner()


def _snap(busy, idle, steal=0, tool=0, server=None, cpus=2, at_s=0.0):
    return Snapshot(busy=busy, idle=idle, steal=steal, cpus=cpus, tool=tool, server=server, at_s=at_s)


def test_known_counters_decide_busy_by_the_stated_rule():
    start = _snap(0, 0, tool=0, server=0)
    # 2 CPUs for 1 s = 200 ticks. A parallel worker holds one CPU, the tool 30 ticks: 65 % used, not busy.
    quiet = between(start, _snap(130, 70, tool=30, server=0, at_s=1.0))
    assert (quiet.other, quiet.tool, quiet.utilisation, quiet.busy) == (0.5, 0.15, 0.65, False)
    # Competing processes fill the host: 170 of 200 ticks are theirs.
    full = between(start, _snap(200, 0, tool=20, server=10, at_s=1.0))
    assert (full.other, full.server, full.busy) == (0.85, 0.05, True)
    # The tool and the server alone fill it: nothing else ran, not busy.
    own = between(start, _snap(200, 0, tool=120, server=80, at_s=1.0))
    assert (own.other, own.busy) == (0.0, False)
    # Steal alone, 12.5 % of the capacity.
    assert between(start, _snap(40, 135, steal=25, tool=40, server=0)).busy is True
    # An endpoint target: no server tree, its CPU (if on this host) counts as other processes.
    assert between(_snap(0, 0), _snap(50, 150, tool=50)).server is None
    assert isinstance(between(start, start), NotMeasured)


def test_process_trees_from_a_made_up_proc(tmp_path):
    """The tool's tree holds the tool and its children; the server it started is counted apart."""
    me = os.getpid()
    (tmp_path / "stat").write_text("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1\ncpu1 1\n")
    # pid → (ppid, utime, stime, cutime, cstime)
    procs = {me: (1, 10, 5, 1, 0), 5001: (me, 3, 1, 0, 0), 5002: (me, 40, 10, 5, 5), 5003: (5002, 7, 3, 0, 0),
             6000: (1, 99, 0, 0, 0)}  # fmt: skip
    for pid, (ppid, *ticks) in procs.items():
        (tmp_path / str(pid)).mkdir()
        stat = f"{pid} (a (b) c) S {ppid} " + " ".join(["0"] * 9) + " " + " ".join(map(str, ticks)) + " 0 0"
        (tmp_path / str(pid) / "stat").write_text(stat)
    s = snapshot(server_pid=5002, proc=tmp_path)
    assert (s.busy, s.idle, s.cpus) == (150, 850, 2)
    assert s.tool == 16 + 4 and s.server == 60 + 10


def _busy_loops(n: int) -> list[int]:
    """`n` busy loops outside this process's tree (their parent exits at once): other processes, as a
    competing job is."""
    code = "import time\nt = time.time()\nwhile time.time() - t < 60: pass"
    pids = []
    for _ in range(n):
        out = subprocess.run(
            ["sh", "-c", f'"{sys.executable}" -c "{code}" >/dev/null 2>&1 & echo $!'],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        pids.append(int(out.stdout.strip()))
    return pids


def _ticks(pids: list[int]) -> int:
    """utime + stime of the loops, read the way a reader of /proc would (fields 14 and 15)."""
    total = 0
    for pid in pids:
        text = open(f"/proc/{pid}/stat").read()
        total += sum(int(x) for x in text[text.rfind(")") + 2 :].split()[11:13])
    return total


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="needs Linux /proc")
def test_a_competing_busy_loop_is_detected():
    """The loops' own CPU time over the run is the known truth: the meter counts it as other processes
    (not the tool's), and the host they fill is flagged. The shared host may already be busy before the
    loops start, so the quiet run is compared, not required to be quiet (counters above decide that)."""
    p = point(mode="closed", concurrency=2, num_requests=40)
    quiet = run(p).host_load
    loops = _busy_loops(os.cpu_count() or 2)
    try:
        before = _ticks(loops)
        busy = run(p).host_load
        theirs = (_ticks(loops) - before) / (busy.wall_s * busy.cpus * os.sysconf("SC_CLK_TCK"))
    finally:
        for pid in loops:
            os.kill(pid, signal.SIGKILL)
    assert isinstance(quiet, HostLoad) and isinstance(busy, HostLoad)
    assert theirs >= 0.1, theirs  # the loops ran (on a shared host, beside others)
    assert busy.other >= theirs - 0.05, (theirs, busy)
    assert busy.tool < theirs and busy.busy and busy.utilisation >= 0.9, busy
    assert busy.other + 0.05 >= quiet.other, (quiet, busy)


def test_meter_without_proc_says_not_measured(tmp_path):
    assert isinstance(HostLoadMeter(proc=tmp_path / "none").stop(), NotMeasured)


def _spec(url: str) -> dict:
    return endpoint_spec_dict(url, ((2, 12),), {"name": "mock-host-load", "load": {"slo": e2el_slo(5000)}})


def test_a_build_records_it_and_a_busy_run_is_flagged_on_page_1_and_in_diff(tmp_path):
    out = tmp_path / "out"
    with running(MockServerConfig(model="mock-model", ttft_ms=20, itl_ms=5)) as url:
        write_spec(tmp_path / "model.yaml", _spec(url))
        built = runner.invoke(app, ["build", str(tmp_path / "model.yaml"), "-o", str(out)])
    assert built.exit_code == 0, built.output
    sheet = json.loads((out / "factsheet.json").read_text())
    load = sheet["load"]["points"][0]["host_load"]
    assert load["method"].startswith("/proc/stat") and load["cpus"] >= 1 and load["server"] is None
    ok = runner.invoke(app, ["validate", str(out / "factsheet.json")])
    assert ok.exit_code == 0, ok.output
    # The same build, its run stated as on a busy host (an attested field: nothing re-derives it).
    load.update(busy=True, other=0.8, utilisation=1.0)
    busy = tmp_path / "busy"
    shutil.copytree(out, busy)
    (busy / "factsheet.json").write_text(json.dumps(sheet))
    html = render_html(Factsheet.model_validate(sheet))
    assert "Measured on a busy host:" in html and "other processes 80%" in html
    page = (out / "factsheet.html").read_text()
    assert "Host load during the runs" in page
    assert ("Measured on a busy host:" in page) == _was_busy(out)
    result = runner.invoke(app, ["diff", str(out / "factsheet.json"), str(busy / "factsheet.json"),
                                 "-o", str(tmp_path / "d")])  # fmt: skip
    report = json.loads((tmp_path / "d" / "diff.json").read_text())
    notes = {n for f in report["figures"] for n in f["notes"]}
    assert any(n.startswith("new: 1 of 1 run(s) measured on a busy host") for n in notes), result.output


def _was_busy(out) -> bool:
    return json.loads((out / "factsheet.json").read_text())["load"]["points"][0]["host_load"]["busy"]
