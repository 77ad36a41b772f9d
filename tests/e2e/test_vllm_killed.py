"""kill -9 of `factsheet build` on the real embedded target leaves no vLLM process (API server, engine
core, workers) running, and the killed build's first point checkpointed for `--resume`.

What `--resume` then does (reuse the checkpoint, measure the changed point) is tested on the same kill against
the mock server (tests/factsheet/test_build_resume.py): here it would cost a second real server start.
Needs the serving environment (`make serving`); slow (~1 min server start).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.support.procs import running

REPO = Path(__file__).resolve().parents[2]
SERVING_PYTHON = Path(os.environ.get("FACTSHEET_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not SERVING_PYTHON.exists(), reason="serving environment missing: run `make serving`"),
]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _descendants(pid: int) -> set[int]:
    tree, out, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def _live(pids: set[int]) -> set[int]:
    return {pid for pid in pids if running(pid)}


def test_kill_9_during_load_leaves_no_vllm_process_and_keeps_the_first_points_checkpoint(tmp_path):
    spec = yaml.safe_load((REPO / "models" / "smollm2-cpu.yaml").read_text())
    spec["target"]["python"] = str(SERVING_PYTHON)
    spec["target"]["stop_grace_s"] = 5
    spec["load"]["points"] = [{"concurrency": 2, "num_requests": 6}, {"concurrency": 4, "num_requests": 400}]
    for search in ("capacity", "compared_workloads"):  # no search: the resumed build measures one point
        spec["load"].pop(search)
    for section in ("accuracy", "energy"):
        spec.pop(section)
    path = tmp_path / "model.yaml"
    path.write_text(yaml.safe_dump(spec))
    out, log = tmp_path / "out", tmp_path / "build.log"
    with log.open("wb") as f:
        cli = subprocess.Popen(
            [sys.executable, "-m", "factsheet", "build", str(path), "-o", str(out)],
            stdout=f, stderr=subprocess.STDOUT, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
    tree: set[int] = set()
    try:
        deadline = time.monotonic() + 600
        while "load 2/2" not in log.read_text() and cli.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert cli.poll() is None, log.read_text()
        time.sleep(3)
        tree = _descendants(cli.pid)
        assert len(tree) >= 3, tree  # wrapper, API server, engine core (and its helpers)
        cli.send_signal(signal.SIGKILL)
        cli.wait(10)
        deadline = time.monotonic() + 60  # grace 5 s, then SIGKILL of the group
        while _live(tree) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not _live(tree), f"left running: {sorted(_live(tree))}"
    finally:
        cli.kill()
        for pid in _live(tree):
            os.kill(pid, signal.SIGKILL)
    # Killed during load 2/2: load 1/2 is checkpointed (what --resume reuses), load 2/2 is not.
    assert (out / "measurements" / "load-01.json").is_file()
    assert not (out / "measurements" / "load-02.json").exists()
