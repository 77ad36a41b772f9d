"""One worker process: its own event loop (uvloop where installed) drives its share of the point, on the
run's one clock origin, and streams each finished request's record to its own file (nothing is held
after it is written). Closed loop: its users take request indexes from one counter shared by every
worker (one population of users). Open loop: every `workers`-th request of the one absolute schedule,
from index `worker` on. Chat sessions are split whole (a turn waits for the previous reply, so a
session's turns stay in one worker): closed loop, its users take session indexes from the shared counter;
open loop, it starts every `workers`-th session of the one schedule of session starts. Their bodies, which
carry the server's replies, go to a second file for the requests digest (drive.SentBodies)."""

from __future__ import annotations

import array
import asyncio
import gc
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from pydantic import Field

from probes.core.measurement import Model
from probes.load.client import Endpoint, begin_body, new_client, warm
from probes.load.drive import RunState, WorkItem, send_request, send_turn
from probes.load.point import LoadPoint
from probes.load.records import RequestRecord, record_line
from probes.load.sessions import closed_sessions, open_sessions
from probes.load.workers.check import EventLoop, sample_loop_lag
from probes.load.workloads.plan import Plan

try:  # optional at run time: the loop is the standard one where uvloop is not installed (Windows)
    import uvloop
except ImportError:  # pragma: no cover - uvloop is a dependency where it installs
    uvloop = None

EVENT_LOOP: EventLoop = "uvloop" if uvloop is not None else "asyncio"


@dataclass(frozen=True)
class WorkerJob:
    worker: int
    workers: int
    base_url: str
    endpoint: Endpoint
    point: LoadPoint
    plan: Plan
    offsets: (
        list[float] | None
    )  # open loop: the whole schedule (s from the run's start); sessions: their starts
    share: int  # closed loop: this worker's users; open loop: its max_concurrency share (0: uncapped)
    records_path: str
    bodies_path: str  # chat sessions: the bodies sent (drive.SentBodies)


class WorkerReport(Model):
    """What a worker says at its end, beside its records file."""

    worker: int
    sent: int = 0
    loop_lag_ms: list[float] = Field(default_factory=list)
    aborted: str | None = None
    deadline_hit: bool = False
    error: str | None = Field(None, description="the worker failed: its type and message")


class Shared:
    """The objects every worker and the coordinator share (passed to each process at its start)."""

    def __init__(self, ctx, workers: int) -> None:
        self.next_index = ctx.Value("q", 0)  # closed loop: the next request a user takes
        self.done = ctx.Array("q", workers, lock=False)  # requests finished, per worker (each writes its own)
        self.stop = ctx.Event()  # the target went away, or the scraper found it saturated
        self.start_at = ctx.Value("d", 0.0, lock=False)  # the run's t0 (perf_counter); 0: not yet
        self.ready = ctx.Semaphore(0)

    def take(self, n: int) -> int | None:
        with self.next_index.get_lock():
            i = self.next_index.value
            if i >= n:
                return None
            self.next_index.value = i + 1
            return i


class _SharedRun(RunState):
    """A worker's view of the run: it also ends when another worker or the coordinator says stop, and a
    target this worker finds unreachable stops every worker."""

    def __init__(self, point: LoadPoint, t0: float, shared: Shared):
        super().__init__(point, t0)
        self.shared = shared

    def may_send(self) -> bool:
        return super().may_send() and not self.shared.stop.is_set()

    async def wait_until(self, t: float) -> bool:
        if not await super().wait_until(t):
            return False
        while self.now() < t:  # uvloop's timers round to 1 ms and may fire early: a send is never early
            await asyncio.sleep(0)
        return True

    def observe(self, rec: RequestRecord) -> None:
        super().observe(rec)
        if self.aborted is not None:
            self.shared.stop.set()


class _Flag:
    def __init__(self) -> None:
        self.on = False

    def is_set(self) -> bool:
        return self.on

    def set(self) -> None:
        self.on = True


class _Value:
    def __init__(self, value: float) -> None:
        self.value = value


class _NoWait:
    def release(self) -> None:
        pass


class LocalShared:
    """What `Shared` gives a worker, for a worker alone on its node (a Ray actor): its t0 is set before it
    starts, `stop` is set by the coordinator through the actor, and a closed loop's users take this
    worker's share of the request (or session) indexes (worker, worker + workers, …): nodes share no counter."""

    def __init__(self, job: WorkerJob, start_at: float):
        self.ready, self.start_at, self.stop = _NoWait(), _Value(start_at), _Flag()
        self.done = [0] * job.workers
        self.worker, self.workers = job.worker, job.workers
        self._mine: Iterator[int] | None = None

    def take(self, n: int) -> int | None:
        if self._mine is None:
            self._mine = iter(range(self.worker, n, self.workers))
        return next(self._mine, None)


def run_job(job: WorkerJob, shared: Shared | LocalShared) -> WorkerReport:
    """Run one worker's share on a new event loop (uvloop where installed); failures are reported."""
    report = WorkerReport(worker=job.worker)
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop if uvloop else None) as runner:
            report = runner.run(_main(job, shared))
    except BaseException as exc:  # reported, not raised: the coordinator names the worker
        report.error = f"{type(exc).__name__}: {exc}"
    return report


def main(job: WorkerJob, shared: Shared, conn) -> None:
    """The process's entry: run the job, then send its report (also when it failed)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator ends the workers (Ctrl-C reaches it)
    conn.send_bytes(run_job(job, shared).model_dump_json().encode())
    conn.close()


async def _main(job: WorkerJob, shared: Shared) -> WorkerReport:
    point, endpoint = job.point, job.endpoint
    report = WorkerReport(worker=job.worker)
    lags = array.array("d")
    sessions = job.plan.sessions is not None
    with open(job.records_path, "wb", buffering=0) as out, open(job.bodies_path, "wb", buffering=0) as bodies:
        pool = new_client(job.base_url, point.request_timeout_s, endpoint.headers())
        async with pool as client:
            await warm(client, time.perf_counter())
            gc.freeze()  # see runner._fewer_gc_pauses: old-generation passes stall the loop
            shared.ready.release()
            while shared.start_at.value == 0.0:
                await asyncio.sleep(0.002)
            t0 = shared.start_at.value
            await asyncio.sleep(max(0.0, t0 - time.perf_counter()))
            run = _SharedRun(point, t0, shared)
            sampler = asyncio.create_task(sample_loop_lag(lags))
            work = WorkItem(endpoint, job.plan, point.output_len, keep_bodies=sessions, log=bodies)
            sink = _Sink(out, shared, job.worker)
            try:
                if sessions:
                    await _sessions(client, job, work, run, sink, shared)
                elif point.mode == "closed":
                    await _closed(client, job, work, run, sink, shared)
                else:
                    await _open(client, job, work, run, sink)
            finally:
                sampler.cancel()
    report.sent, report.loop_lag_ms = sink.count, lags.tolist()
    report.aborted, report.deadline_hit = run.aborted, run.deadline_hit
    return report


class _Sink:
    """Finished records go to the worker's file as they finish, one unbuffered write each: a worker that
    dies leaves on disk every request it finished."""

    def __init__(self, out: IO[bytes], shared: Shared, worker: int):
        self.out, self.shared, self.worker, self.count = out, shared, worker, 0

    def __call__(self, rec: RequestRecord) -> None:
        self.out.write(record_line(rec))
        self.count += 1
        self.shared.done[self.worker] = self.count


async def _sessions(
    client, job: WorkerJob, work: WorkItem, run: RunState, sink: _Sink, shared: Shared
) -> None:
    scripts = job.plan.sessions or []

    async def send(rec: RequestRecord, messages: list[dict[str, str]], max_tokens: int) -> None:
        rec.worker = job.worker
        await send_turn(client, job.endpoint, work, rec, messages, max_tokens, run)
        sink(rec)

    if job.point.mode == "closed":
        await closed_sessions(scripts, job.share, run, send, lambda: shared.take(len(scripts)))
    else:
        mine = range(job.worker, len(scripts), job.workers)
        await open_sessions(scripts, job.offsets or [], mine, run, send)


async def _closed(client, job: WorkerJob, work: WorkItem, run: RunState, sink: _Sink, shared: Shared) -> None:
    n = job.point.num_requests

    async def user() -> None:
        while run.may_send():
            i = shared.take(n)
            if i is None:
                return
            rec = RequestRecord(index=i, sent_s=run.now(), worker=job.worker)
            await send_request(client, job.endpoint, work, rec, run)
            sink(rec)

    await asyncio.gather(*(user() for _ in range(job.share)))


async def _open(client, job: WorkerJob, work: WorkItem, run: RunState, sink: _Sink) -> None:
    offsets = job.offsets or []
    slot = asyncio.Semaphore(job.share) if job.share else None
    in_flight: set[asyncio.Future] = set()  # only what is in flight is held

    async def finish(pending, rec: RequestRecord) -> None:
        await pending
        run.observe(rec)
        sink(rec)

    async def capped(i: int, scheduled: float) -> None:
        queued_at = run.now()
        async with slot:
            if not run.may_send():
                return
            now = run.now()
            rec = RequestRecord(
                index=i, scheduled_s=scheduled, queued_s=now - queued_at, sent_s=now, worker=job.worker
            )
            await send_request(client, job.endpoint, work, rec, run)
        sink(rec)

    for i in range(job.worker, len(offsets), job.workers):
        body = work.body(i) if slot is None else b""  # as runner._open_loop: built before its send time
        if not await run.wait_until(offsets[i]):
            break
        if slot is None:  # as runner._open_loop: the bytes leave here, no task start-up in the send lag
            rec = RequestRecord(index=i, scheduled_s=offsets[i], sent_s=run.now(), worker=job.worker)
            task = asyncio.ensure_future(
                finish(begin_body(client, job.endpoint, body, rec, run.t0, work.max_tokens(i)), rec)
            )
        else:
            task = asyncio.ensure_future(capped(i, offsets[i]))
        in_flight.add(task)
        task.add_done_callback(in_flight.discard)
    await asyncio.gather(*in_flight)
