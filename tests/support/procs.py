"""Which processes still run, read from /proc: the tests that kill a tool or a server check that nothing it
started outlives it. A zombie (state Z) has exited and waits only for its parent (or a non-reaping init) to
collect it: it does not count as running."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def _stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def running(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def running_where(match: Callable[[int, list[str]], bool]) -> list[int]:
    """Running processes for which match(pid, stat fields after the name) holds (fields[2] is the group)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(entry)) is not None and fields[0] != "Z":
            if match(int(entry), fields):
                found.append(int(entry))
    return found


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
