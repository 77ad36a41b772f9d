"""`eval humaneval` killed with SIGKILL while it writes leaves no partial output, and the next run
finishes the job and removes the dead writer's temporary file."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probes.core.files import is_temporary

pytestmark = pytest.mark.system

# Runs the CLI with fsync slowed down for one output file, so the kill lands inside its write: the
# bytes are in the temporary file, the rename has not happened yet.
SLOW_WRITE = """
import os, sys, time
import probes.core.files as files
target, marker = sys.argv[1], sys.argv[2]
real = os.fsync
def fsync(fd):
    name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
    if name.startswith("." + target + "."):
        open(marker, "w").close()
        time.sleep(600)
    real(fd)
files.os.fsync = fsync
from factsheet.cli.commands import app
sys.argv = ["factsheet", *sys.argv[3:]]
app()
"""


def _samples(tmp_path: Path, small_tasks) -> Path:
    tasks = small_tasks.tasks[:3]
    lines = [{"task_id": t.task_id, "completion": t.canonical_solution} for t in tasks]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _env(cache_root) -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "FACTSHEET_CACHE_DIR": str(cache_root), "PYTHONPATH": root}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("killed_in", ["eval_samples.jsonl", "eval_report.json"])
def test_sigkill_mid_write_leaves_no_partial_file(
    tmp_path, small_dataset, small_tasks, small_expected, cache_root, killed_in
):
    out, marker = tmp_path / "out", tmp_path / "writing"
    args = ["eval", "humaneval", "--samples", str(_samples(tmp_path, small_tasks)), "--dataset",
            str(small_dataset), "-o", str(out)]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITE, killed_in, str(marker), *args],
        env=_env(cache_root), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    while not marker.exists():
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the eval never reached the write"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    left = sorted(p.name for p in out.iterdir())
    finished = [n for n in left if not is_temporary(out / n)]
    # Files are written verdicts first: killed in the verdicts, nothing is there; killed in the
    # report, the verdicts are complete and the report is absent (never half there).
    assert finished == ([] if killed_in == "eval_samples.jsonl" else ["eval_samples.jsonl"])
    for name in finished:
        assert len((out / name).read_text().splitlines()) == 3
    assert len(left) - len(finished) == 1  # the dead writer's temporary, hidden and named as one

    done = subprocess.run(
        [sys.executable, "-m", "factsheet", *args], env=_env(cache_root), capture_output=True, timeout=240
    )
    assert done.returncode == 0, done.stderr.decode()
    assert sorted(p.name for p in out.iterdir()) == ["eval_report.json", "eval_samples.jsonl"]
    assert json.loads((out / "eval_report.json").read_text())["pass_rates"]["base"]["pass@1"] == 1.0
