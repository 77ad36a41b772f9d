"""A local endpoint's server found by the port it listens on (probes/hostload/listener.py): its process tree is
booked as the server's CPU, not as other processes; a server outside this host, or one the tool's own process
serves (the in-process mock), is not taken for it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from probes.hostload.listener import local_port, local_server_pid
from probes.targets.mock_server import MockServerConfig, running
from probes.targets.ports import free_port

pytestmark = pytest.mark.system  # starts a server process


@pytest.fixture
def outside_server():
    """An HTTP server that is not the tool's child: started by a shell that exits (so it is reparented)."""
    port = free_port()
    cmd = f"{sys.executable} -m http.server {port} --bind 127.0.0.1 >/dev/null 2>&1 & echo $!"
    pid = int(subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, check=True).stdout)
    try:
        for _ in range(100):
            if local_server_pid(f"http://127.0.0.1:{port}") is not None:
                break
            time.sleep(0.05)
        yield port, pid
    finally:
        os.kill(pid, signal.SIGTERM)


def test_found_by_port(outside_server):
    port, pid = outside_server
    assert local_server_pid(f"http://127.0.0.1:{port}") == pid
    assert local_server_pid(f"http://localhost:{port}/v1") == pid


def test_not_this_host_nor_the_tool_itself():
    assert local_port("http://10.1.2.3:8000") is None and local_server_pid("http://10.1.2.3:8000") is None
    assert local_port("https://localhost") == 443
    with running(MockServerConfig()) as url:
        assert local_server_pid(url) is None  # the tool's own process serves it
