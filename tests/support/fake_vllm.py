"""A served model's process tree like vLLM's, for the tests that kill or stop the tool: a server (the mock
server) that spawns a worker ignoring SIGTERM, every process carrying a marker in its command line, so a
test finds any survivor wherever it was re-parented.

A target's `command` runs it: `[sys.executable, "-c", TREE, "{port}", marker]`.
"""

from __future__ import annotations

import sys
import uuid

from tests.support.mock_spec import e2el_slo, endpoint_spec_dict
from tests.support.procs import cmdline, running_where

TREE = (
    "import signal,subprocess,sys;marker=sys.argv[2];"
    "subprocess.Popen([sys.executable,'-c','import signal,time;signal.signal(signal.SIGTERM,signal.SIG_IGN);"
    "time.sleep(600)',marker]);"
    "from probes.targets.mock_server import MockServerConfig, serve_forever;"
    "serve_forever(MockServerConfig(model='m', ttft_ms=20, itl_ms=40), port=int(sys.argv[1]))"
)


def tree_spec(name: str, marker: str) -> dict:
    """A build spec whose vllm-kind target runs TREE, with one load point of 400 requests (minutes at the
    tree's 20 + 7 x 40 ms each): a build still measuring when the test stops or kills it."""
    target = {
        "kind": "vllm",
        "model": {"path": "unused"},
        "served_model_name": "m",
        "command": [sys.executable, "-c", TREE, "{port}", marker],
        "stop_grace_s": 1,
    }
    overrides = {"name": name, "model": {"name": "m"}, "load": {"slo": e2el_slo(2000)}}
    return {**endpoint_spec_dict("unused", ((1, 400),), overrides), "target": target}


def new_marker() -> str:
    return f"factsheet-test-{uuid.uuid4().hex}"


def marked(marker: str) -> list[int]:
    """Live processes (not zombies) whose command line carries the marker."""
    return running_where(lambda pid, fields: marker.encode() in cmdline(pid))
