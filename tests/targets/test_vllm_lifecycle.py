"""The server lifecycle: started on a free port, waited for, always stopped with its whole group.

A stand-in command (the mock server, or a process that fails) exercises the same code path that
starts vLLM; the real vLLM start is covered by the slow end-to-end test.
"""

from __future__ import annotations

import os
import sys
import time

import httpx
import pytest

from probes.targets import TargetError, VllmServer, VllmTarget
from probes.targets.model_source import PreparedModel
from tests.support.procs import running_where

pytestmark = pytest.mark.system

SERVE_MOCK = (
    "from probes.targets.mock_server import MockServerConfig, serve_forever;"
    "serve_forever(MockServerConfig(model='m'), port={port})"
)


def _server(code: str, **kw) -> VllmServer:
    target = VllmTarget(model={"path": "unused"}, command=[sys.executable, "-c", code], **kw)
    return VllmServer(target, PreparedModel(source="unused", served_path="unused"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _live_group(pgid: int) -> list[int]:
    """Processes of the group that still run (zombies left to a non-reaping init do not count)."""
    return running_where(lambda pid, fields: int(fields[2]) == pgid)


def test_starts_waits_and_stops_group():
    server = _server(SERVE_MOCK + ";")
    with server:
        assert httpx.get(f"{server.base_url}/v1/models").status_code == 200
        pid = server._proc.pid
        state = server._state
    assert not _alive(pid)
    assert not state.exists()  # per-run state folder removed


def test_child_grandchildren_are_stopped_too():
    # A server that spawns a worker (as vLLM does) and ignores SIGTERM: the group is killed.
    code = (
        "import signal,subprocess,sys;signal.signal(signal.SIGTERM, signal.SIG_IGN);"
        "subprocess.Popen([sys.executable,'-c','import time;time.sleep(600)']);" + SERVE_MOCK
    )
    server = _server(code, stop_grace_s=1)
    with server:
        pgid = server._proc.pid
        assert len(_live_group(pgid)) >= 2
    deadline = time.monotonic() + 5  # SIGKILL is sent; let the kernel finish tearing down
    while _live_group(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _live_group(pgid) == []


def test_failed_start_shows_log_tail():
    server = _server("import sys; print('CUDA out of memory (simulated)'); sys.exit(3)")
    with pytest.raises(TargetError, match=r"exited with code 3[\s\S]*CUDA out of memory"):
        with server:
            pass
    assert server._state is None


def test_start_deadline():
    server = _server("import time; print('loading...', flush=True); time.sleep(600)", startup_timeout_s=2)
    with pytest.raises(TargetError, match="did not answer /v1/models within 2 s"):
        with server:
            pass
    assert not _alive(server._proc.pid)


def test_missing_serving_python():
    target = VllmTarget(model={"path": "x"}, python="/nonexistent/python")
    with pytest.raises(TargetError, match="target.python"):
        target.serving_python()
