"""A served model's process tree like vLLM's, for the tests that kill or stop the tool: a server (the mock
server) that spawns a worker ignoring SIGTERM, every process carrying a marker in its command line, so a
test finds any survivor wherever it was re-parented.

A target's `command` runs it: `[sys.executable, "-c", TREE, "{port}", marker]`.
"""

from __future__ import annotations

import uuid

from tests.support.procs import cmdline, running_where

TREE = (
    "import signal,subprocess,sys;marker=sys.argv[2];"
    "subprocess.Popen([sys.executable,'-c','import signal,time;signal.signal(signal.SIGTERM,signal.SIG_IGN);"
    "time.sleep(600)',marker]);"
    "from probes.targets.mock_server import MockServerConfig, serve_forever;"
    "serve_forever(MockServerConfig(model='m', ttft_ms=20, itl_ms=40), port=int(sys.argv[1]))"
)


def new_marker() -> str:
    return f"factsheet-test-{uuid.uuid4().hex}"


def marked(marker: str) -> list[int]:
    """Live processes (not zombies) whose command line carries the marker."""
    return running_where(lambda pid, fields: marker.encode() in cmdline(pid))
