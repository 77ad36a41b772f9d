"""The mock server's serving model in a process of its own (tests and benches that build against it at GPU
scale): hundreds of streams are served by its own interpreter, not one shared with the build's client, whose
loop would otherwise delay the law's tokens."""

from __future__ import annotations

import contextlib
import subprocess
import sys


@contextlib.contextmanager
def serving_process(profile: str = "gpu-scale", scale: float = 1.0):
    """Yields the base URL of a mock serving `profile` (probes/targets/serving_model.py) with every cost × scale."""
    code = (
        "import time; from probes.targets.mock_server import MockServerConfig, running; "
        "from probes.targets.serving_model import PROFILES; "
        f"cm = running(MockServerConfig(model='mock-model', serving=PROFILES[{profile!r}].scaled({scale!r}))); "
        "print(cm.__enter__(), flush=True); time.sleep(3600)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
