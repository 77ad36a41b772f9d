"""What else used the machine while a run measured it.

Two snapshots, at the start and the end of a run, of:

- /proc/stat's aggregate `cpu` line: ticks of every online CPU spent busy (user, nice, system, irq, softirq),
  idle (idle, iowait) and stolen by the hypervisor (steal);
- the CPU ticks (utime + stime, and cutime + cstime of reaped children) of the tool's process tree and of
  the server's process tree: an embedded target's (started by the tool, so taken out of the tool's tree) or
  a local endpoint's, found by the port it listens on (probes/hostload/listener.py).

Between the two: the host's capacity is every CPU's ticks; "other processes" is the host's busy ticks less
the tool's and the server's. A run is flagged as measured on a **busy host** when the host was nearly full
(busy + steal ≥ 90 % of capacity) and other processes with steal took ≥ 20 % of it, or when steal alone took
≥ 10 %. Why: while a CPU is free, the tool and the server do not wait for one, whatever else runs; on a
full host, a fifth of the capacity held by others (on 2 CPUs, 0.4 of one — a parallel test worker or a
`nice` job the size of the issue's) delays the client's sends and the server's steps, and the latencies then
measure the host as much as the deployment. A parallel CI worker using one of 2 CPUs leaves the host below
90 % and is not flagged. Steal is CPU this virtual machine was owed and did not get: 10 % of it is already
a slower machine.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from probes.core.measurement import Model, NotMeasured
from probes.hostload.speed import HostSpeed

PROC = Path("/proc")
BUSY_UTILISATION = 0.9
BUSY_OTHERS = 0.2
BUSY_STEAL = 0.1
HOST_LOAD_METHOD = (
    "/proc/stat aggregate cpu ticks at the run's start and end (busy: user, nice, system, irq, softirq; idle: "
    "idle, iowait; steal), all online CPUs; the tool's and the server's process trees (the embedded server, or "
    "a local endpoint's found by its listening port) from /proc/<pid>/stat (utime + stime + cutime + cstime); other processes = busy − tool − server"
)
BUSY_RULE = (
    f"busy host: busy + steal ≥ {BUSY_UTILISATION:.0%} of the host's CPU capacity and other processes + "
    f"steal ≥ {BUSY_OTHERS:.0%} of it, or steal ≥ {BUSY_STEAL:.0%} (a full host makes the tool and the server "
    "wait for a CPU; a free one does not)"
)


class HostLoad(Model):
    """The host's CPU over one run, as fractions of its capacity (every online CPU for the run's length)."""

    wall_s: float = Field(ge=0, description="the run's length between the two snapshots, seconds")
    cpus: int = Field(ge=1, description="online CPUs /proc/stat counts")
    utilisation: float = Field(description="busy + steal, fraction of capacity")
    steal: float = Field(description="ticks the hypervisor gave to other machines, fraction of capacity")
    tool: float = Field(
        description="the tool's process tree (client, in-process servers), fraction of capacity"
    )
    server: float | None = Field(
        description="the server's process tree, fraction of capacity: the embedded server's, or an endpoint's "
        "on this host found by the port it listens on; None: an endpoint not found on this "
        "host (a server here that could not be found counts under other processes)"
    )
    other: float = Field(description="busy ticks of every other process, fraction of capacity")
    busy: bool = Field(description="measured on a busy host (`rule`)")
    speed: HostSpeed | None = Field(
        None,
        description="the host's speed just before the run, by a reference kernel (a capacity search's "
        "confirmation runs and repeats: what `factsheet diff` compares; None: not timed)",
    )
    rule: str = BUSY_RULE
    method: str = HOST_LOAD_METHOD

    def summary(self) -> str:
        """One line, as page 1 and diff say it."""
        return (
            f"other processes {self.other:.0%} and steal {self.steal:.0%} of the host's {self.cpus} CPUs "
            f"(host {self.utilisation:.0%} used) over {self.wall_s:.0f} s"
        )


@dataclass(frozen=True)
class Snapshot:
    """Counters at one instant: the host's (ticks) and the two process trees' (ticks)."""

    busy: int
    idle: int
    steal: int
    cpus: int
    tool: int
    server: int | None
    at_s: float


def _host(proc: Path) -> tuple[int, int, int, int]:
    lines = (proc / "stat").read_text().splitlines()
    fields = [int(x) for x in lines[0].split()[1:]] + [0] * 10
    user, nice, system, idle, iowait, irq, softirq, steal = fields[:8]
    cpus = sum(1 for line in lines[1:] if line.startswith("cpu"))
    return user + nice + system + irq + softirq, idle + iowait, steal, max(cpus, 1)


def processes(proc: Path) -> dict[int, tuple[int, int]]:
    """pid → (parent pid, ticks of itself and its reaped children), for every readable process."""
    out = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:  # gone between listing and reading, or not ours to read
            continue
        # The command name (field 2) is in parentheses and may hold spaces: split after its last ")".
        rest = text[text.rfind(")") + 2 :].split()
        out[int(entry.name)] = (int(rest[1]), sum(int(x) for x in rest[11:15]))
    return out


def process_tree(procs: dict[int, tuple[int, int]], root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in procs and pid not in out:
            out.add(pid)
            todo += children.get(pid, [])
    return out


def _ticks(procs: dict[int, tuple[int, int]], pids: set[int]) -> int:
    return sum(procs[p][1] for p in pids)


def snapshot(server_pid: int | None = None, proc: Path = PROC, at_s: float | None = None) -> Snapshot:
    """The counters now. Raises OSError where /proc/stat cannot be read (not Linux)."""
    busy, idle, steal, cpus = _host(proc)
    procs = processes(proc)
    server = process_tree(procs, server_pid) if server_pid is not None else set()
    tool = process_tree(procs, os.getpid()) - server
    return Snapshot(
        busy, idle, steal, cpus, _ticks(procs, tool), _ticks(procs, server) if server_pid is not None else None,
        at_s if at_s is not None else time.monotonic(),
    )  # fmt: skip


def between(start: Snapshot, end: Snapshot) -> HostLoad | NotMeasured:
    """The host's load between two snapshots, judged by the busy-host rule."""
    total = (end.busy - start.busy) + (end.idle - start.idle) + (end.steal - start.steal)
    if total <= 0:
        return NotMeasured(reason="no CPU ticks passed between the run's start and end (too short to tell)")
    busy, steal = (end.busy - start.busy) / total, (end.steal - start.steal) / total
    tool = max(0, end.tool - start.tool) / total
    server = None if start.server is None or end.server is None else max(0, end.server - start.server) / total
    other = max(0.0, busy - tool - (server or 0.0))
    utilisation = busy + steal
    flagged = (utilisation >= BUSY_UTILISATION and other + steal >= BUSY_OTHERS) or steal >= BUSY_STEAL
    return HostLoad(
        wall_s=round(max(0.0, end.at_s - start.at_s), 3), cpus=end.cpus, utilisation=round(utilisation, 4),
        steal=round(steal, 4), tool=round(tool, 4), server=None if server is None else round(server, 4),
        other=round(other, 4), busy=flagged,
    )  # fmt: skip


class HostLoadMeter:
    """Started before a run, stopped after it: the host's load over the run (NotMeasured without /proc)."""

    def __init__(self, server_pid: int | None = None, proc: Path = PROC):
        self.server_pid, self.proc = server_pid, proc
        try:
            self.start: Snapshot | None = snapshot(server_pid, proc)
        except (OSError, ValueError, IndexError):
            self.start = None

    def stop(self) -> HostLoad | NotMeasured:
        if self.start is None:
            return NotMeasured(reason="/proc/stat not readable on this host (not Linux)")
        try:
            end = snapshot(self.server_pid, self.proc)
        except (OSError, ValueError, IndexError):
            return NotMeasured(reason="/proc/stat not readable at the run's end")
        return between(self.start, end)
