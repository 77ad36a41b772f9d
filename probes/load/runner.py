"""Drive one load point (closed or open loop) and keep every request's raw record."""

from __future__ import annotations

import array
import asyncio
import contextlib
import gc
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from pydantic import Field

from probes.core.errors import InputError
from probes.core.measurement import DEFAULT_PERCENTILES, Distribution, Model, NotMeasured, summarize
from probes.core.progress import Update
from probes.hostload import HostLoad, HostLoadMeter
from probes.load.arrivals import arrival_offsets
from probes.load.client import Endpoint, begin_body, new_client, warm
from probes.load.drive import WAKE_S as WAKE_S  # re-exported: callers read the wake interval here
from probes.load.drive import RunState, WorkItem, send_request, send_turn
from probes.load.metrics import LoadMetrics, compute_metrics, pool_metrics, request_latencies
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord, counted_by_tokenizer
from probes.load.sessions import closed_sessions, open_sessions, session_starts
from probes.load.turns import TurnFigures, turn_figures
from probes.load.workers import ClientCheck, Executor, Fleet, Outcome, WorkerCheck, check_split
from probes.load.workers.check import ClockOffset, EventLoop, running_event_loop, sample_loop_lag
from probes.load.workers.child import WorkerReport
from probes.load.workers.ray_fleet import RayFleet
from probes.load.workloads.context import BuildContext
from probes.load.workloads.plan import Plan, system_prompts
from probes.load.workloads.profiles import WorkloadProfile
from probes.load.workloads.registry import build_plan
from probes.load.workloads.workload import Workload, load_tokenizer, synthetic_prompts
from probes.server_view import (
    Saturation,
    Scraper,
    ScrapeRecord,
    ServerView,
    ServerViewSpec,
    check_endpoint,
    point_server_side,
    saturation_watch,
)


class LoadProbeError(InputError):
    """A load run asked for in a way that cannot work (names the argument)."""


# When the client, not the server, decides a figure. The load reported is the schedule's rate, so the
# sends must keep to it; a latency figure is stated to within LATENCY_RESOLUTION of itself, so the
# client's own delay must stay below that. The client's delay is read from its send lag: an event loop
# that sends late also stamps responses late, by about as much, and TTFT and E2EL run from a send to a
# response stamp. (Gaps between two response stamps, ITL and TPOT, see the difference of two such
# delays, so a steady delay cancels there.) Both are read twice: by when each request began to leave the
# client (sent_s) and by when its last byte did (written_s). A request is started in microseconds, but its
# bytes leave only once its connection is open and the kernel takes them: a client that starts requests on
# time while their bytes queue behind new connections or full socket buffers keeps to the schedule by sent_s
# alone, while the server sees them late, and TTFT (from sent_s) carries the wait.
MIN_ACHIEVED_FRACTION = 0.98
LATENCY_RESOLUTION = 0.05
CLIENT_BOUND_RULE = (
    f"client-bound when sends achieved < {MIN_ACHIEVED_FRACTION * 100:g} % of the scheduled rate, or the "
    f"client's own delay at p50 or p99 > {LATENCY_RESOLUTION * 100:g} % of the smallest TTFT or E2EL figure "
    "at that percentile (the resolution latency figures are stated to), each read both by when a request "
    "began to leave (sent_s: achieved rate, send lag) and by when its last byte left (written_s: achieved "
    "rate by the last byte, write lag): either could move a reported figure by more than that"
)
SEND_LAG = "sent_s (the client began writing the request) − scheduled send − client queue time"
WRITE_LAG = "written_s (the request's last byte handed to the kernel) − scheduled send − client queue time"


class Arrivals(Model):
    """How faithfully the client applied the open-loop schedule (None for closed loop)."""

    target_rate: float
    scheduled_rate: float | None = Field(
        description="the drawn schedule's own rate: (n − 1) / scheduled span"
    )
    achieved_rate: float | None = Field(
        description="sent requests by when each began to leave: (n − 1) / (last sent_s − first sent_s)"
    )
    send_lag_ms: Distribution = Field(description=f"per request, from sent_s: {SEND_LAG}")
    client_queue_ms: Distribution
    achieved_fraction: float | None = Field(None, description="achieved rate / scheduled rate")
    achieved_rate_written: float | None = Field(
        None,
        description="sent requests by when each one's last byte left: (n − 1) / (last written_s − first "
        "written_s), over the requests whose bytes left (None: records without written_s)",
    )
    achieved_fraction_written: float | None = Field(
        None,
        description="achieved_rate_written / the scheduled rate of those same requests",
    )
    write_lag_ms: Distribution | None = Field(
        None, description=f"per request, from written_s: {WRITE_LAG} (None: as above)"
    )
    client_bound: bool = Field(description="the client's own delay could move a reported figure (see rule)")
    client_bound_rule: str = CLIENT_BOUND_RULE
    client_bound_reasons: list[str] = Field(default_factory=list)


class RequestCounts(Model):
    """What became of every request a point planned, warm-up and cool-down included:
    planned = sent + never_sent, sent = completed + truncated + failed (records.OUTCOME_RULE)."""

    planned: int
    sent: int
    completed: int
    truncated: int
    failed: int
    never_sent: int = Field(description="planned but not sent: the duration reached, or the run aborted")


def request_counts(point: LoadPoint, records: list[RequestRecord]) -> RequestCounts:
    """The point's request counts from its records (the run and `validate` both call this)."""
    completed = sum(1 for r in records if r.ok)
    truncated = sum(1 for r in records if r.truncated)
    return RequestCounts(
        planned=point.num_requests,
        sent=len(records),
        completed=completed,
        truncated=truncated,
        failed=len(records) - completed - truncated,
        never_sent=point.num_requests - len(records),
    )


StopReason = Literal["count", "duration", "target_unreachable", "saturated", "worker_lost"]


class PointResult(Model):
    point: LoadPoint
    label: str
    started_at: float = Field(description="epoch seconds of the run's time origin (records are relative)")
    sent: int
    not_sent: int = Field(0, description="requests of the point never sent (duration reached or run aborted)")
    stop_reason: StopReason = Field("count", description="what ended sending")
    aborted: str | None = Field(None, description="why the run stopped early; None when it ran its course")
    model: str | None = Field(None, description="the model id every request named (the body's `model`)")
    requests: RequestCounts | None = Field(
        None, description="what became of every planned request (None: an older point)"
    )
    metrics: LoadMetrics
    window_epoch: tuple[float, float] | None = Field(description="steady window in epoch seconds")
    arrivals: Arrivals | None
    workload: Workload
    turns: list[TurnFigures] | None = Field(
        None, description="chat-sessions: figures by turn index over the steady window"
    )
    records: list[RequestRecord] = Field(exclude=True, default_factory=list)
    server_view: ServerView | NotMeasured | None = Field(
        None, description="the target's /metrics over the run (None: not asked)"
    )
    saturation: Saturation | None = Field(None, description="the saturation test")
    scrapes: list[ScrapeRecord] | NotMeasured | None = Field(exclude=True, default=None)
    host_load: HostLoad | NotMeasured | None = Field(
        exclude=True, default=None, description="what else used the host over the run (probes/hostload)"
    )
    client: ClientCheck | None = Field(
        None,
        description="each worker's event-loop lag and the client-bound verdict per worker and for the whole "
        "(every point; an older document's only with load.workers > 1: one worker is judged by its own loop "
        "lag too; None: an older one-worker point, judged by `arrivals` alone)",
    )


Progress = Update


async def run_point(
    base_url: str,
    model: str,
    point: LoadPoint,
    slo: SLO,
    *,
    api_key: str | None = None,
    prompts: Sequence[str] | None = None,
    workload: Workload | None = None,
    tokenizer_path: str | None = None,
    progress: Progress | None = None,
    percentiles: tuple[float, ...] = DEFAULT_PERCENTILES,
    output_lens: list[int] | None = None,
    profile: WorkloadProfile | None = None,
    sampling: dict | None = None,
    server_view: ServerViewSpec | None = None,
    server_pid: int | None = None,
    workers: int = 1,
    executor: Executor = "processes",
    ray_address: str | None = None,
) -> PointResult:
    """Run one load point. `output_lens` (per request, cycled) overrides `point.output_len`. `profile`
    builds the requests (for this point's count and seed); without it, `prompts` or synthetic ones.
    `sampling` (e.g. a tuner configuration's temperature, top_p) goes into every request's body;
    `server_view` scrapes the target's /metrics while it runs (probes/server_view). The host's own load over
    the run is measured (`host_load`), the embedded server's process tree (`server_pid`) apart. `workers` > 1
    splits the point across that many processes (probes/load/workers; resolve the count with `resolve_workers`)."""
    if profile is not None:
        ctx = BuildContext(point.num_requests, point.seed, point.input_len, point.output_len, tokenizer_path)
        plan = build_plan(profile, ctx)
    elif prompts is None:
        prompts, workload = synthetic_prompts(
            point.num_requests, point.input_len, point.seed, tokenizer_path, point.output_len
        )
    if profile is None:
        if workload is None:
            raise LoadProbeError("run_point: 'workload' must describe the prompts passed")
        plan = Plan(prompts, output_lens, workload)
    plan.workload = plan.workload.model_copy(update={"system_prompts": system_prompts(plan)})
    endpoint = Endpoint(base_url, model, point.endpoint, api_key, point.ignore_eos, dict(sampling or {}))
    _check_plan(plan, point, endpoint)
    check_split(point, plan, workers)
    meter = HostLoadMeter(server_pid)  # the workers are the tool's own processes: its tree holds them
    if workers > 1 or executor == "ray":
        fleet = _fleet(executor, ray_address)(base_url, point, endpoint, plan, workers)
        result = await _drive_workers(
            base_url, point, slo, endpoint, plan, progress, percentiles, server_view, fleet
        )
    else:
        with _fewer_gc_pauses():
            counter = _token_counter(tokenizer_path or _plan_tokenizer(plan))
            result = await _drive(
                base_url, point, slo, endpoint, plan, progress, percentiles, server_view, counter
            )
    result.host_load = meter.stop()
    result.model = model
    return result


def _check_plan(plan: Plan, point: LoadPoint, endpoint: Endpoint) -> None:
    if plan.sessions is not None and endpoint.kind != "chat":
        raise LoadProbeError("workload chat-sessions: needs the chat endpoint (load.endpoint: chat)")
    if plan.sessions is not None and point.mode == "open" and point.max_concurrency:
        raise LoadProbeError(
            "workload chat-sessions: max_concurrency does not apply (sessions are open loop)"
        )
    if plan.offsets is not None and point.mode != "open":
        raise LoadProbeError("workload trace: replays its own schedule: the point must be open loop (rate)")
    if plan.sessions is not None and point.mode == "closed" and len(plan.sessions) < point.concurrency:
        # A user without a session would sit idle: the point would run below the concurrency it states.
        raise LoadProbeError(
            f"workload chat-sessions: {point.num_requests} turns make {len(plan.sessions)} sessions for "
            f"{point.concurrency} users (each user runs whole sessions): raise num_requests to at least "
            "concurrency × turns_max"
        )


@contextlib.contextmanager
def _fewer_gc_pauses():
    # An old-generation GC pass walks everything the process holds and stalls the event loop,
    # which shows up as send lag and TTFT. Freezing what exists before the run keeps those passes
    # to the run's own objects. Counted, so overlapping runs unfreeze once, at the end.
    _GC_DEPTH[0] += 1
    if _GC_DEPTH[0] == 1:
        gc.freeze()
    try:
        yield
    finally:
        _GC_DEPTH[0] -= 1
        if _GC_DEPTH[0] == 0:
            gc.unfreeze()


_GC_DEPTH = [0]


def _plan_tokenizer(plan: Plan) -> str | None:
    spec = plan.workload.spec
    return spec.tokenizer_path if spec is not None else None


def _token_counter(tokenizer_path: str | None):
    """text → its token count by the workload's tokenizer, or None without one."""
    tok = load_tokenizer(tokenizer_path)
    if tok is None:
        return None
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


async def _drive(base_url, point, slo, endpoint, plan: Plan, progress, percentiles, view, counter=None):
    missing = check_endpoint(base_url, endpoint.headers()) if view and view.scrape else None
    async with new_client(base_url, point.request_timeout_s, endpoint.headers()) as client:
        await warm(client, time.perf_counter())
        watch = _Watch()
        scraper = _scraper(base_url, endpoint, view, watch) if view and view.scrape and not missing else None
        started_at = time.time()
        run = RunState(point, time.perf_counter())
        if scraper:
            watch.run = run
            scraper.start(run.t0)
        # Sessions' bodies carry the server's replies, so they are logged (to a temporary file) for the digest;
        # independent requests' bodies are rebuilt from the plan for it after the run: either way memory does
        # not grow with the run's length.
        sessions = plan.sessions is not None
        work = WorkItem(endpoint, plan, point.output_len, keep_bodies=sessions)
        # The client's own delay, sampled as each of many workers samples its own: a closed loop has no
        # schedule to lag behind, so this is the only reading of how late its response stamps can be.
        lags = array.array("d")
        sampler = asyncio.create_task(sample_loop_lag(lags))
        try:
            if plan.sessions is not None:
                records = await _sessions(client, endpoint, point, work, run, progress)
            else:
                loop = _closed_loop if point.mode == "closed" else _open_loop
                records = await loop(client, endpoint, point, work, run, progress)
        finally:
            sampler.cancel()
            scrapes = scraper.stop() if scraper else missing
    digest = work.digest_of([r.index for r in records])
    workload = plan.workload.model_copy(update={"requests_digest": digest})
    if counter is not None:
        prompts = plan.prompts
        prompt_of = None if endpoint.kind == "chat" else (lambda i: prompts[i % len(prompts)])
        counted_by_tokenizer(records, counter, endpoint.ignore_eos, prompt_of)
    result = _result(point, slo, records, started_at, workload, run, percentiles, view, scrapes)
    alone = WorkerReport(worker=0, sent=len(records), loop_lag_ms=lags.tolist())
    outcome = Outcome(records, [alone], run.t0, started_at, event_loop=running_event_loop())
    result.client = client_check(records, point, result.metrics, result.arrivals, outcome)
    return result


def _fleet(executor: Executor, ray_address: str | None):
    if executor == "ray":
        return lambda *args: RayFleet(*args, ray_address=ray_address)
    return Fleet


async def _drive_workers(
    base_url, point, slo, endpoint, plan: Plan, progress, percentiles, view, fleet: Fleet
):
    """As `_drive`, with the sending done by the fleet's workers (processes or Ray actors) on one t0; the
    scraper and the saturation watch stay here. Every figure comes from the merged records through the same `_result`."""
    missing = check_endpoint(base_url, endpoint.headers()) if view and view.scrape else None
    async with fleet:
        await fleet.ready()
        watch = _Watch()
        scraper = _scraper(base_url, endpoint, view, watch) if view and view.scrape and not missing else None
        t0, started_at = fleet.go()
        run = RunState(point, t0)
        if scraper:
            watch.run = run
            scraper.start(t0)
        try:
            outcome = await fleet.wait(progress, lambda: run.saturated is not None)
        finally:
            scrapes = scraper.stop() if scraper else missing
    lost = [x for x in outcome.lost] + [
        f"worker {r.worker} failed: {r.error}" for r in outcome.reports if r.error and r.error != "lost"
    ]
    if lost:  # what it does to the claim: the figures rest on the other workers' records only
        lost.append(_LOST_MEANS)
    aborts = [f"worker {r.worker}: {r.aborted}" for r in outcome.reports if r.aborted]
    run.aborted = "; ".join(aborts + lost) or None
    run.deadline_hit = any(r.deadline_hit for r in outcome.reports)
    records = outcome.records
    digest = outcome.bodies_digest  # chat sessions: of the bodies the workers logged
    if digest is None:
        digest = WorkItem(endpoint, plan, point.output_len, keep_bodies=False).digest_of(
            [r.index for r in records]
        )
    workload = plan.workload.model_copy(update={"requests_digest": digest})
    result = _result(point, slo, records, started_at, workload, run, percentiles, view, scrapes)
    result.client = client_check(records, point, result.metrics, result.arrivals, outcome)
    if lost and not aborts:
        result.stop_reason = "worker_lost"
    return result


_LOST_MEANS = (
    "a lost worker's requests in flight when it died, and those it had not sent, are not in the records "
    "(counted as not sent); the figures rest on the finished requests, at a load below the point's after the loss"
)


def client_check(
    records: list[RequestRecord],
    point: LoadPoint,
    metrics: LoadMetrics,
    whole: Arrivals | None,
    outcome: Outcome,
) -> ClientCheck:
    """The client-bound rule per worker (its loop lag; open loop: its share's arrivals too) and for the
    whole, each reason naming its worker. One worker (the single-process run, whose records name none) is
    judged by the same rule: its share is every record, so the whole run's arrivals are its own."""
    lags = [
        WorkerLag(r.worker, r.sent, summarize(r.loop_lag_ms, unit="ms", definition=_LOOP_LAG))
        for r in outcome.reports
    ]
    pooled = summarize([x for r in outcome.reports for x in r.loop_lag_ms], unit="ms", definition=_LOOP_LAG)
    return judged_client(
        records, point, metrics, whole, lags, pooled,
        executor=outcome.executor, event_loop=outcome.event_loop, clock_offsets=outcome.clock_offsets,
    )  # fmt: skip


@dataclass(frozen=True)
class WorkerLag:
    """What the records do not hold of a worker: how many it sent, and its event loop's lag as sampled."""

    worker: int
    sent: int
    lag: Distribution


def rejudged_client(
    stated: ClientCheck,
    records: list[RequestRecord],
    point: LoadPoint,
    metrics: LoadMetrics,
    whole: Arrivals | None,
) -> ClientCheck:
    """The client check `factsheet validate` recomputes: each worker's loop lag and count as stated (attested:
    not in the records, as the host's load is not), everything else (its share's arrivals, the write delay,
    every verdict and reason) from the records by the rule the run applied."""
    lags = [WorkerLag(w.worker, w.sent, w.loop_lag_ms) for w in stated.per_worker]
    return judged_client(
        records, point, metrics, whole, lags, stated.loop_lag_ms,
        executor=stated.executor, event_loop=stated.event_loop, clock_offsets=stated.clock_offsets,
    )  # fmt: skip


def judged_client(
    records: list[RequestRecord],
    point: LoadPoint,
    metrics: LoadMetrics,
    whole: Arrivals | None,
    lags: list[WorkerLag],
    pooled: Distribution,
    *,
    executor: Executor,
    event_loop: EventLoop,
    clock_offsets: list[ClockOffset] | None,
) -> ClientCheck:
    """The client check from the records and each worker's lag, with the executor, event loop and clock
    offsets it states (the run's own, or as a document states them)."""
    per: list[WorkerCheck] = []
    by_worker: dict[int, list[RequestRecord]] = {}
    alone = len(lags) == 1
    for r in records:
        by_worker.setdefault(r.worker if r.worker is not None else -1, []).append(r)
    for w in lags:
        reasons = loop_lag_reasons(w.lag, metrics)
        arrivals = _arrivals(records if alone else by_worker.get(w.worker, []), point, metrics)
        if arrivals is not None:
            reasons += arrivals.client_bound_reasons
        per.append(
            WorkerCheck(
                worker=w.worker,
                sent=w.sent,
                loop_lag_ms=w.lag,
                send_lag_ms=arrivals.send_lag_ms if arrivals else None,
                achieved_fraction=arrivals.achieved_fraction if arrivals else None,
                write_lag_ms=arrivals.write_lag_ms if arrivals else None,
                achieved_fraction_written=arrivals.achieved_fraction_written if arrivals else None,
                client_bound=bool(reasons),
                reasons=reasons,
            )  # fmt: skip
        )
    reasons = [f"worker {c.worker}: {why}" for c in per for why in c.reasons]
    if not alone:  # one worker's arrivals are the whole run's: its reasons are already there, once
        reasons += [f"whole run: {why}" for why in (whole.client_bound_reasons if whole else [])]
    written = [1000 * (r.written_s - r.sent_s) for r in records if r.written_s is not None]
    return ClientCheck(
        workers=len(lags),
        executor=executor,
        clock_offsets=clock_offsets,
        event_loop=event_loop,
        loop_lag_ms=pooled,
        write_delay_ms=summarize(written, unit="ms", definition="written_s − sent_s"),
        per_worker=per,
        client_bound=bool(reasons),
        client_bound_reasons=reasons,
    )


_LOOP_LAG = (
    "lateness of a 10 ms timer on the worker's event loop, sampled throughout the run (uvloop's timers have "
    "1 ms granularity: a sample may read up to 1 ms early, below 0)"
)


class _Watch:
    """Where the scraper's thread says a point is saturated (the run exists only once the clock starts)."""

    run: RunState | None = None

    def stop(self, reason: str) -> None:
        if self.run is not None and self.run.saturated is None:
            self.run.saturated = reason


def _scraper(base_url: str, endpoint: Endpoint, view: ServerViewSpec, watch: _Watch) -> Scraper:
    """The point's scraper, its baseline read before the clock starts."""
    check = saturation_watch(watch.stop) if view.stop_when_saturated else None
    return Scraper(base_url, endpoint.headers(), view.interval_s, check)


async def _sessions(client, endpoint, point, work: WorkItem, run: RunState, progress) -> list[RequestRecord]:
    records: list[RequestRecord] = []
    done = [0]

    async def send(rec: RequestRecord, messages: list[dict[str, str]], max_tokens: int) -> None:
        records.append(rec)
        await send_turn(client, endpoint, work, rec, messages, max_tokens, run)
        done[0] += 1
        if progress:
            progress(done[0], work.plan.count)

    scripts = work.plan.sessions or []
    if point.mode == "closed":
        counter = iter(range(len(scripts)))
        await closed_sessions(scripts, point.concurrency or 1, run, send, lambda: next(counter, None))
    else:
        await open_sessions(scripts, session_starts(len(scripts), point), range(len(scripts)), run, send)
    return sorted(records, key=lambda r: r.index)


async def _finish(pending, rec: RequestRecord, run: RunState, progress, records, point) -> None:
    await pending
    run.observe(rec)
    if progress:
        progress(len(records), point.num_requests)


async def _closed_loop(
    client, endpoint, point, work: WorkItem, run: RunState, progress
) -> list[RequestRecord]:
    records: list[RequestRecord] = []
    counter = iter(range(point.num_requests))

    async def user() -> None:
        for i in counter:
            if not run.may_send():
                return
            rec = RequestRecord(index=i, sent_s=run.now())
            records.append(rec)
            await send_request(client, endpoint, work, rec, run)
            if progress:
                progress(len(records), point.num_requests)

    await asyncio.gather(*(user() for _ in range(point.concurrency or 1)))
    return sorted(records, key=lambda r: r.index)


async def _open_loop(client, endpoint, point, work: WorkItem, run: RunState, progress) -> list[RequestRecord]:
    # A trace brings its own schedule; otherwise the arrival process draws one.
    offsets = work.plan.offsets
    if offsets is None:
        offsets = arrival_offsets(point.num_requests, point.rate, point.burstiness, point.seed)
    slot = asyncio.Semaphore(point.max_concurrency) if point.max_concurrency else None
    records: list[RequestRecord] = []
    tasks = []

    async def send(i: int, scheduled: float) -> None:
        queued_at = run.now()
        if slot:
            await slot.acquire()
        try:
            if not run.may_send():  # the target went away (or time ran out) while this one queued
                return
            now = run.now()
            rec = RequestRecord(index=i, scheduled_s=scheduled, queued_s=now - queued_at, sent_s=now)
            records.append(rec)
            await send_request(client, endpoint, work, rec, run)
        finally:
            if slot:
                slot.release()
        if progress:
            progress(len(records), point.num_requests)

    point.check_schedule(float(offsets[-1]) if len(offsets) else 0.0, "the open loop's schedule")
    for i, offset in enumerate(offsets):
        # Uncapped: the body is built before its send time (one ahead is all that is held), so building
        # it (a trace's prompt is generated now) sits in neither the send lag nor TTFT.
        body = work.body(i) if slot is None else b""
        # absolute schedule (lateness never accumulates), never slept past the deadline or an abort
        if not await run.wait_until(offset):
            break
        if slot is None:
            # Uncapped: start the request right here, so no task start-up sits in the send lag.
            rec = RequestRecord(index=i, scheduled_s=float(offset), sent_s=run.now())
            records.append(rec)
            pending = begin_body(client, endpoint, body, rec, run.t0, work.max_tokens(i))
            tasks.append(asyncio.ensure_future(_finish(pending, rec, run, progress, records, point)))
        else:
            tasks.append(asyncio.create_task(send(i, float(offset))))
    await asyncio.gather(*tasks)
    return sorted(records, key=lambda r: r.index)


def steady_records(records: list[RequestRecord], point: LoadPoint) -> list[RequestRecord]:
    """The steady window's records: warm-up and cool-down requests left out (the metrics rest on these)."""
    end = len(records) - point.cooldown_requests
    return records[point.warmup_requests : max(point.warmup_requests, end)]


def _rate(times: list[float]) -> float | None:
    span = max(times) - min(times) if len(times) > 1 else 0.0
    return (len(times) - 1) / span if span > 0 else None


def _arrivals(
    records: list[RequestRecord],
    point: LoadPoint,
    metrics: LoadMetrics | None = None,
) -> Arrivals | None:
    """How the sends kept to the schedule, by CLIENT_BOUND_RULE."""
    if point.mode != "open" or not records:
        return None
    achieved = _rate([r.sent_s for r in records])
    scheduled = _rate([r.scheduled_s for r in records])
    lag = summarize([1000 * (r.send_lag_s or 0.0) for r in records], unit="ms", definition=SEND_LAG)
    queue = summarize(
        [1000 * r.queued_s for r in records], unit="ms", definition="time waiting for a max_concurrency slot"
    )
    fraction = achieved / scheduled if achieved and scheduled else None
    reasons = sent_s_reasons(achieved, fraction, lag, metrics)
    last_byte = _by_last_byte(records, metrics)
    return Arrivals(
        target_rate=point.rate,
        scheduled_rate=scheduled,
        achieved_rate=achieved,
        achieved_fraction=fraction,
        send_lag_ms=lag,
        client_queue_ms=queue,
        achieved_rate_written=last_byte.rate,
        achieved_fraction_written=last_byte.fraction,
        write_lag_ms=last_byte.lag,
        client_bound=bool(reasons or last_byte.reasons),
        client_bound_reasons=[*reasons, *last_byte.reasons],
        client_bound_rule=CLIENT_BOUND_RULE,
    )


def sent_s_reasons(
    achieved: float | None, fraction: float | None, lag: Distribution, metrics: LoadMetrics | None
) -> list[str]:
    """The client-bound rule read by when each request began to leave (sent_s: achieved rate, send lag)."""
    reasons = []
    if fraction is None:
        reasons.append("fewer than two requests sent: no achieved rate")
    elif fraction < MIN_ACHIEVED_FRACTION:
        reasons.append(
            f"achieved rate {achieved:.3g}/s by sent_s is {100 * (1 - fraction):.1f} % below the schedule"
        )
    return reasons + _client_delay_reasons(lag, metrics)


class _LastByte(NamedTuple):
    rate: float | None = None
    fraction: float | None = None
    lag: Distribution | None = None
    reasons: tuple[str, ...] = ()


def _by_last_byte(records: list[RequestRecord], metrics: LoadMetrics | None) -> _LastByte:
    """The arrivals rule read by when each request's last byte left (written_s). Only requests whose bytes
    left count, against their own schedule: a connection the server refused is not the client falling
    behind. Records without written_s (an older one-worker run) give no reading."""
    written = [r for r in records if r.written_s is not None]
    if not written:
        return _LastByte()
    lag = summarize([1000 * (r.write_lag_s or 0.0) for r in written], unit="ms", definition=WRITE_LAG)
    rate = _rate([r.written_s for r in written])
    scheduled = _rate([r.scheduled_s for r in written])
    fraction = rate / scheduled if rate and scheduled else None
    reasons = []
    if fraction is not None and fraction < MIN_ACHIEVED_FRACTION:
        reasons.append(
            f"achieved rate {rate:.3g}/s by the last byte (written_s) is {100 * (1 - fraction):.1f} % below "
            "the schedule"
        )
    reasons += _client_delay_reasons(lag, metrics, "write-lag")
    return _LastByte(rate, fraction, lag, tuple(reasons))


def loop_lag_reasons(lag: Distribution, metrics: LoadMetrics | None) -> list[str]:
    """A worker's event-loop lag by the client-bound rule (LOOP_RULE): the run judges each worker by it, and
    `validate` holds a stated client check's verdict to its stated lag."""
    return _client_delay_reasons(lag, metrics, "loop lag")


def _client_delay_reasons(
    lag: Distribution, metrics: LoadMetrics | None, what: str = "send-lag"
) -> list[str]:
    """Where the client's delay exceeds the resolution of the smallest latency figure it enters."""
    reasons = []
    for q in (50, 99):
        delay = lag.p(q)
        figures = [(getattr(metrics, k).p(q), k) for k in ("ttft_ms", "e2el_ms")] if metrics else []
        figures = [(v, k) for v, k in figures if v is not None]
        if delay is None or not figures:
            continue
        smallest, name = min(figures)
        if delay > LATENCY_RESOLUTION * smallest:
            reasons.append(
                f"{what} p{q} {delay:.3g} ms > {LATENCY_RESOLUTION * 100:g} % of {name.removesuffix('_ms')} "
                f"p{q} {smallest:.4g} ms"
            )
    return reasons


def point_figures(
    point: LoadPoint,
    slo: SLO,
    records: list[RequestRecord],
    started_at: float,
    percentiles: tuple[float, ...] = DEFAULT_PERCENTILES,
) -> tuple[LoadMetrics, tuple[float, float] | None, Arrivals | None]:
    """What a run's raw records determine: its metrics, steady window (epoch s) and arrival fidelity by
    today's rules. The run itself and `factsheet validate`'s re-derivation both call this (an older
    document's rules: factsheet/document/rules)."""
    metrics = compute_metrics(steady_records(records, point), slo, percentiles=percentiles)
    window = None
    if metrics.window_start_s is not None and metrics.window_end_s is not None:
        window = (started_at + metrics.window_start_s, started_at + metrics.window_end_s)
    return metrics, window, _arrivals(records, point, metrics)


def server_figures(
    records: list[RequestRecord],
    scrapes: list[ScrapeRecord] | NotMeasured,
    view: ServerViewSpec,
    metrics: LoadMetrics,
) -> tuple[ServerView | NotMeasured, Saturation]:
    """What a run's scrapes and records determine of the server view and the saturation test. The run
    itself and `factsheet validate`'s re-derivation both call this."""
    ttft = [(r.sent_s, request_latencies(r)["ttft_ms"]) for r in records if r.ok]
    ends = [r.end_s for r in records if r.end_s is not None]
    return point_server_side(
        scrapes,
        view.interval_s,
        [r.sent_s for r in records],
        ends,
        ttft,
        metrics.ttft_ms.p(50),
        view.stop_when_saturated,
    )


def _stop_reason(run: RunState) -> StopReason:
    if run.aborted:
        return "target_unreachable"
    return "saturated" if run.saturated else "duration" if run.deadline_hit else "count"


def _result(
    point, slo, records, started_at, workload, run: RunState, percentiles, view, scrapes
) -> PointResult:
    metrics, window, arrivals = point_figures(point, slo, records, started_at, percentiles)
    turns = turn_figures(steady_records(records, point), percentiles)
    seen, saturation = (
        server_figures(records, scrapes, view, metrics) if scrapes is not None else (None, None)
    )
    return PointResult(
        point=point,
        label=point.label,
        started_at=started_at,
        sent=len(records),
        not_sent=point.num_requests - len(records),
        stop_reason=_stop_reason(run),
        aborted=run.aborted or run.saturated,
        requests=request_counts(point, records),
        metrics=metrics,
        window_epoch=window,
        arrivals=arrivals,
        workload=workload,
        turns=turns,
        records=records,
        server_view=seen,
        saturation=saturation,
        scrapes=scrapes,
    )


def pool_points(
    results: list[PointResult], slo: SLO, *, percentiles: tuple[float, ...] = DEFAULT_PERCENTILES
) -> LoadMetrics:
    """Repetitions of one point combined honestly: their steady-window raw records pooled."""
    return pool_metrics([steady_records(r.records, r.point) for r in results], slo, percentiles=percentiles)
