"""The coordinator's side of a many-worker run: how many workers a host can run, how the point is split,
starting the processes on one clock origin, and merging their records into one list, in request order.

The processes are spawned (not forked: the caller may hold threads, a scraper or a test's server) and
share one monotonic clock (time.perf_counter is CLOCK_MONOTONIC on Linux and macOS, one per host), so
every record's times are relative to the same t0 as in a single-process run."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from probes.core.errors import InputError
from probes.core.progress import Update
from probes.load.arrivals import arrival_offsets
from probes.load.client import Endpoint
from probes.load.drive import bodies_digest
from probes.load.point import LoadPoint
from probes.load.records import RequestRecord
from probes.load.sessions import session_starts
from probes.load.workers.check import ClockOffset, EventLoop
from probes.load.workers.child import EVENT_LOOP, Shared, WorkerJob, WorkerReport, main
from probes.load.workloads.plan import Plan

Workers = int | Literal["auto"]
Executor = Literal["processes", "ray"]
_READY_S = 60.0  # spawning imports the tool in each worker: seconds on a busy 2-core host
_GO_AHEAD_S = 0.05  # t0 lies this far ahead of "go", so every worker is asleep on it when it comes


class WorkersError(InputError):
    """A worker count this host cannot run, or a point it cannot be split for (names the setting)."""


def host_cores() -> int:
    """The cores this process may run on (its affinity, which a container's CPU set narrows)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def resolve_workers(value: Workers, what: str = "workers", executor: Executor = "processes") -> int:
    """`auto` → one worker per core; a number is checked against the host (one event loop per core). With
    executor ray the cluster's CPUs bound it, checked once connected (still before anything is sent)."""
    if executor == "ray" and value == "auto":
        raise WorkersError(f"{what}: 'auto' counts this host's cores; with executor ray give a number")
    cores = host_cores() if executor == "processes" else 1 << 30
    if value == "auto":
        return cores
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise WorkersError(f"{what}: {value!r} is not 'auto' or a whole number ≥ 1")
    if value > cores:
        raise WorkersError(
            f"{what}: {value} is more than this host can run ({cores} cores; one event loop per core)"
        )
    return value


def check_split(point: LoadPoint, plan: Plan, workers: int, what: str = "workers") -> None:
    """What a split across workers cannot carry, refused before anything is sent."""
    if workers == 1:
        return
    if plan.sessions is not None and len(plan.sessions) < workers:
        # sessions are split whole (a turn waits for the previous reply): a worker without one would idle
        raise WorkersError(
            f"{what}: {workers} workers for {len(plan.sessions)} chat sessions: each worker needs at least one"
        )
    users = point.concurrency if point.mode == "closed" else point.max_concurrency
    if users is not None and users < workers:
        name = "concurrency" if point.mode == "closed" else "max_concurrency"
        raise WorkersError(f"{what}: {workers} workers for {name} {users}: each worker needs at least one")


def _schedule(point: LoadPoint, plan: Plan) -> list[float]:
    """The open loop's one absolute schedule every worker takes its share of: the requests' send times (a
    trace's own, or drawn as a single process draws them), or for chat sessions the sessions' starts."""
    if plan.sessions is not None:
        return session_starts(len(plan.sessions), point)
    offsets = plan.offsets
    if offsets is None:
        offsets = arrival_offsets(point.num_requests, point.rate, point.burstiness, point.seed).tolist()
    point.check_schedule(float(offsets[-1]) if len(offsets) else 0.0, "the open loop's schedule")
    return offsets


def _shares(total: int | None, workers: int) -> list[int]:
    if total is None:
        return [0] * workers
    return [total // workers + (1 if w < total % workers else 0) for w in range(workers)]


@dataclass
class Outcome:
    records: list[RequestRecord]
    reports: list[WorkerReport]
    t0: float
    started_at: float
    event_loop: EventLoop = EVENT_LOOP
    lost: list[str] = field(default_factory=list)  # workers that ended without a report, and why
    executor: Executor = "processes"
    clock_offsets: list[ClockOffset] | None = None  # executor ray: each node's clock against ours
    # chat sessions: the requests digest of the bodies the workers logged (they carry the server's
    # replies, so they cannot be rebuilt from the plan as independent requests' are)
    bodies_digest: str | None = None


class Fleet:
    """Spawn the workers (`start`), give them one t0 (`go`), wait for them (`wait`)."""

    def __init__(self, base_url: str, point: LoadPoint, endpoint: Endpoint, plan: Plan, workers: int):
        self.point, self.workers = point, workers
        self.ctx = mp.get_context("spawn")
        self.shared = Shared(self.ctx, workers)
        self.dir = tempfile.TemporaryDirectory(prefix="factsheet-load-")
        self.sessions = plan.sessions is not None
        offsets = _schedule(point, plan) if point.mode == "open" else None
        shares = _shares(point.concurrency if point.mode == "closed" else point.max_concurrency, workers)
        self.paths = [Path(self.dir.name) / f"worker-{w}.jsonl" for w in range(workers)]
        self.bodies = [Path(self.dir.name) / f"worker-{w}-bodies.bin" for w in range(workers)]
        self.jobs = [
            WorkerJob(
                w,
                workers,
                base_url,
                endpoint,
                point,
                plan,
                offsets,
                shares[w],
                str(self.paths[w]),
                str(self.bodies[w]),
            )
            for w in range(workers)
        ]
        self.procs: list = []
        self.conns: list = []

    async def __aenter__(self) -> Fleet:
        for job in self.jobs:
            mine, theirs = self.ctx.Pipe(duplex=False)
            proc = self.ctx.Process(target=main, args=(job, self.shared, theirs), daemon=True)
            proc.start()
            theirs.close()
            self.procs.append(proc)
            self.conns.append(mine)
        return self

    async def __aexit__(self, *exc) -> None:
        self.shared.stop.set()
        for proc in self.procs:
            proc.join(0 if exc[0] is not None else 10)
            if proc.is_alive():
                proc.kill()
                proc.join(5)
        self.dir.cleanup()

    async def ready(self) -> None:
        deadline = time.perf_counter() + _READY_S
        for w in range(self.workers):
            while not self.shared.ready.acquire(block=False):
                dead = [k for k, p in enumerate(self.procs) if p.exitcode is not None]
                if dead or time.perf_counter() > deadline:
                    why = (
                        f"worker {dead[0]} exited (code {self.procs[dead[0]].exitcode})"
                        if dead
                        else "timed out"
                    )
                    raise RuntimeError(f"load workers did not start: {why} ({w} of {self.workers} ready)")
                await asyncio.sleep(0.01)

    def go(self) -> tuple[float, float]:
        """Set the run's t0 (perf_counter) for every worker; returns it and its epoch time."""
        t0 = time.perf_counter() + _GO_AHEAD_S
        started_at = time.time() + _GO_AHEAD_S
        self.shared.start_at.value = t0
        self.t0, self.started_at = t0, started_at
        return t0, started_at

    def stop(self) -> None:
        self.shared.stop.set()

    async def wait(self, progress: Update | None, should_stop) -> Outcome:
        """Until every worker has reported (or died); `should_stop()` true tells them to stop sending."""
        reports: dict[int, WorkerReport] = {}
        lost: list[str] = []
        while len(reports) + len(lost) < self.workers:
            await asyncio.sleep(0.1)
            if should_stop():
                self.stop()
            if progress:
                progress(sum(self.shared.done), self.point.num_requests)
            for w, conn in enumerate(self.conns):
                if w in reports or any(x.startswith(f"worker {w} ") for x in lost):
                    continue
                if conn.poll():
                    try:
                        reports[w] = WorkerReport.model_validate_json(conn.recv_bytes())
                    except EOFError:
                        lost.append(f"worker {w} lost (exit code {self.procs[w].exitcode})")
                elif self.procs[w].exitcode is not None and not conn.poll():
                    lost.append(f"worker {w} lost (exit code {self.procs[w].exitcode})")
        records = self._merge()
        ordered = [reports.get(w, WorkerReport(worker=w, error="no report")) for w in range(self.workers)]
        outcome = Outcome(records, ordered, self.t0, self.started_at, lost=lost)
        outcome.bodies_digest = self._bodies_digest(records)
        return outcome

    def _bodies_digest(self, records: list[RequestRecord]) -> str | None:
        """Chat sessions: the digest of the merged records' bodies, from every worker's log, in index order."""
        if not self.sessions:
            return None
        with contextlib.ExitStack() as stack:
            files = [stack.enter_context(open(p, "rb")) for p in self.bodies if p.exists()]
            return bodies_digest(files, [r.index for r in records])

    def _merge(self) -> list[RequestRecord]:
        """Every worker's records, in request order. A worker that died leaves what it wrote: whole lines
        only (a line cut by its death is the one request it was writing, not kept)."""
        records = []
        for path in self.paths:
            data = path.read_bytes() if path.exists() else b""
            for line in data.splitlines(keepends=True):
                if line.endswith(b"\n"):
                    records.append(RequestRecord.model_validate_json(line))
        return sorted(records, key=lambda r: r.index)
