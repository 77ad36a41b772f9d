"""However the tool dies, the serving process tree dies with it (issue: kill -9 left vLLM's server, engine
core and worker running as orphans).

The target is a `command` that starts a process tree like vLLM's: a server (the mock server) that
spawns a worker which ignores SIGTERM. Every process of the tree carries a marker in its command line,
so the test can find any survivor, wherever it was re-parented.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.fake_vllm import TREE, marked, new_marker, tree_spec
from tests.support.spec_builder import write_spec

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]


def _wait(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(0.1)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}  # the checkout's packages, also in the server tree


def _spawn(args: list[str], log: Path) -> subprocess.Popen:
    with log.open("wb") as f:
        return subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT, env=_env(), cwd=ROOT)


def _kill_and_expect_no_survivor(proc: subprocess.Popen, marker: str, sig=signal.SIGKILL) -> None:
    assert len(marked(marker)) >= 3  # wrapper + server + worker at least
    proc.send_signal(sig)
    proc.wait(10)
    # The wrapper sees the lifeline close, sends SIGTERM, waits the grace (1 s), then SIGKILL.
    _wait(lambda: not marked(marker), 20, f"the server tree to go ({marked(marker)} still live)")


def _state_dir(marker: str) -> Path:
    """The server's temporary folder, as its lifeline wrapper was told (python -I lifeline.py FD GRACE DIR --)."""
    for pid in marked(marker):
        args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        if len(args) > 5 and args[2].endswith("lifeline.py"):
            return Path(args[5])
    raise AssertionError("no lifeline wrapper found")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_server_dies_with_a_killed_owner(tmp_path, sig):
    """A process that opened a server and is then killed outright takes the whole tree with it."""
    marker = new_marker()
    code = textwrap.dedent(f"""\
        import sys, time
        from probes.targets import VllmServer, VllmTarget
        from probes.targets.model_source import PreparedModel
        target = VllmTarget(model={{"path": "unused"}}, stop_grace_s=1,
                            command=[sys.executable, "-c", {TREE!r}, "{{port}}", {marker!r}])
        with VllmServer(target, PreparedModel(source="unused", served_path="unused")) as server:
            print("up", server.base_url, flush=True)
            time.sleep(600)
        """)
    log = tmp_path / "owner.log"
    owner = _spawn([sys.executable, "-c", code, marker], log)
    try:
        _wait(lambda: "up " in log.read_text() or owner.poll() is not None, 60, "the server")
        assert owner.poll() is None, log.read_text()
        state = _state_dir(marker)
        assert state.is_dir() and state.name.startswith("factsheet-vllm-")
        _kill_and_expect_no_survivor(owner, marker, sig)
        assert not state.exists()  # the server's temporary folder goes with it
    finally:
        owner.kill()
        for pid in marked(marker):  # never leave a tree behind, even when the assertion failed
            os.kill(pid, signal.SIGKILL)


def test_kill_9_of_factsheet_build_leaves_nothing_running(tmp_path):
    marker = new_marker()
    spec = tmp_path / "model.yaml"
    write_spec(spec, tree_spec("killed-build", marker))
    log = tmp_path / "build.log"
    cli = _spawn([sys.executable, "-m", "factsheet", "build", str(spec), "-o", str(tmp_path / "out")], log)
    try:
        _wait(lambda: "load 1/1" in log.read_text() or cli.poll() is not None, 90, "the first load point")
        assert cli.poll() is None, log.read_text()
        _kill_and_expect_no_survivor(cli, marker)
    finally:
        cli.kill()
        for pid in marked(marker):
            os.kill(pid, signal.SIGKILL)
