"""How much memory a piece of work holds at its peak, measured in a process of its own.

The child runs `setup`, reads its resident set (VmRSS in /proc/self/status), runs `work`, then reads its
peak resident set (VmHWM, the high-water mark of this program's memory since exec; getrusage's ru_maxrss
would carry the parent's from before the exec): the growth is peak minus the resident set before, an upper
bound of what the work held (memory allocated and freed counts too, so the bound errs towards failing). Then
`after` runs and its `result` (JSON) comes back. tracemalloc gave the same figure in-process at three to six
times the CPU: it follows every allocation of the work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import json, re
def _kib(field):
    with open("/proc/self/status") as status:
        return int(re.search(field + r":\\s+(\\d+) kB", status.read()).group(1))
{setup}
before = _kib("VmRSS")
{work}
peak = _kib("VmHWM")
{after}
print(json.dumps({{"growth": (peak - before) * 1024, "result": result}}))
"""


def growth(setup: str, work: str, after: str = "result = None") -> tuple[int, Any]:
    """(bytes the resident set grew by while `work` ran, the `result` that `after` set) from a fresh Python."""
    code = _SCRIPT.format(
        setup=textwrap.dedent(setup), work=textwrap.dedent(work), after=textwrap.dedent(after)
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=600, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    if done.returncode != 0:
        raise AssertionError(done.stderr[-4000:])
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["growth"], out["result"]
