"""Drive one load point (closed or open loop) and keep every request's raw record."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from pydantic import Field

from probes.load.arrivals import arrival_offsets
from probes.load.client import Endpoint, new_client, stream_request
from probes.load.metrics import LoadMetrics, compute_metrics
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord
from probes.load.workload import Workload, synthetic_prompts
from probes.measurement import Distribution, Model, summarize


class Arrivals(Model):
    """How faithfully the client applied the open-loop schedule (None for closed loop)."""

    target_rate: float
    scheduled_rate: float | None = Field(
        description="the drawn schedule's own rate: (n − 1) / scheduled span"
    )
    achieved_rate: float | None = Field(description="sent requests: (n − 1) / (last send − first send)")
    send_lag_ms: Distribution
    client_queue_ms: Distribution
    client_bound: bool = Field(
        description="achieved < 98 % of scheduled or send-lag p99 > 1 ms: "
        "the run measured the client, not the server"
    )


class PointResult(Model):
    point: LoadPoint
    label: str
    started_at: float = Field(description="epoch seconds of the run's time origin (records are relative)")
    sent: int
    metrics: LoadMetrics
    window_epoch: tuple[float, float] | None = Field(description="steady window in epoch seconds")
    arrivals: Arrivals | None
    workload: Workload
    records: list[RequestRecord] = Field(exclude=True, default_factory=list)


Progress = Callable[[int, int], None]


async def run_point(
    base_url: str,
    model: str,
    point: LoadPoint,
    slo: SLO,
    *,
    api_key: str | None = None,
    prompts: list[str] | None = None,
    workload: Workload | None = None,
    tokenizer_path: str | None = None,
    progress: Progress | None = None,
) -> PointResult:
    if prompts is None:
        prompts, workload = synthetic_prompts(point.num_requests, point.input_len, point.seed, tokenizer_path)
    assert workload is not None
    endpoint = Endpoint(base_url, model, point.endpoint, api_key, point.ignore_eos)
    slots = point.concurrency if point.mode == "closed" else (point.max_concurrency or point.num_requests)
    started_at = time.time()
    t0 = time.perf_counter()
    async with new_client(base_url, max(1, slots), point.request_timeout_s) as client:
        if point.mode == "closed":
            records = await _closed_loop(client, endpoint, point, prompts, t0, progress)
        else:
            records = await _open_loop(client, endpoint, point, prompts, t0, progress)
    return _result(point, slo, records, started_at, workload)


def _deadline_passed(point: LoadPoint, t0: float) -> bool:
    return point.duration_s is not None and time.perf_counter() - t0 >= point.duration_s


async def _closed_loop(client, endpoint, point, prompts, t0, progress) -> list[RequestRecord]:
    records: list[RequestRecord] = []
    counter = iter(range(point.num_requests))

    async def user() -> None:
        for i in counter:
            if _deadline_passed(point, t0):
                return
            rec = RequestRecord(index=i, sent_s=time.perf_counter() - t0)
            records.append(rec)
            await stream_request(client, endpoint, prompts[i % len(prompts)], point.output_len, rec, t0)
            if progress:
                progress(len(records), point.num_requests)

    await asyncio.gather(*(user() for _ in range(point.concurrency or 1)))
    return sorted(records, key=lambda r: r.index)


async def _open_loop(client, endpoint, point, prompts, t0, progress) -> list[RequestRecord]:
    offsets = arrival_offsets(point.num_requests, point.rate, point.burstiness, point.seed)
    slot = asyncio.Semaphore(point.max_concurrency) if point.max_concurrency else None
    records: list[RequestRecord] = []
    tasks = []

    async def send(i: int, scheduled: float) -> None:
        queued_at = time.perf_counter() - t0
        if slot:
            await slot.acquire()
        try:
            now = time.perf_counter() - t0
            rec = RequestRecord(index=i, scheduled_s=scheduled, queued_s=now - queued_at, sent_s=now)
            records.append(rec)
            await stream_request(client, endpoint, prompts[i % len(prompts)], point.output_len, rec, t0)
        finally:
            if slot:
                slot.release()
        if progress:
            progress(len(records), point.num_requests)

    for i, offset in enumerate(offsets):
        delay = offset - (time.perf_counter() - t0)  # absolute schedule: lateness never accumulates
        if delay > 0:
            await asyncio.sleep(delay)
        if _deadline_passed(point, t0):
            break
        tasks.append(asyncio.create_task(send(i, float(offset))))
    await asyncio.gather(*tasks)
    return sorted(records, key=lambda r: r.index)


def _steady(records: list[RequestRecord], point: LoadPoint) -> list[RequestRecord]:
    end = len(records) - point.cooldown_requests
    return records[point.warmup_requests : max(point.warmup_requests, end)]


def _rate(times: list[float]) -> float | None:
    span = max(times) - min(times) if len(times) > 1 else 0.0
    return (len(times) - 1) / span if span > 0 else None


def _arrivals(records: list[RequestRecord], point: LoadPoint) -> Arrivals | None:
    if point.mode != "open" or not records:
        return None
    achieved = _rate([r.sent_s for r in records])
    scheduled = _rate([r.scheduled_s for r in records])
    lag = summarize(
        [1000 * (r.send_lag_s or 0.0) for r in records],
        unit="ms",
        definition="actual send − scheduled send − client queue time",
    )
    queue = summarize(
        [1000 * r.queued_s for r in records], unit="ms", definition="time waiting for a max_concurrency slot"
    )
    p99 = lag.p(99) or 0.0
    bound = achieved is None or scheduled is None or achieved < 0.98 * scheduled or p99 > 1.0
    return Arrivals(
        target_rate=point.rate,
        scheduled_rate=scheduled,
        achieved_rate=achieved,
        send_lag_ms=lag,
        client_queue_ms=queue,
        client_bound=bound,
    )


def _result(point, slo, records, started_at, workload) -> PointResult:
    metrics = compute_metrics(_steady(records, point), slo)
    window = None
    if metrics.window_start_s is not None and metrics.window_end_s is not None:
        window = (started_at + metrics.window_start_s, started_at + metrics.window_end_s)
    return PointResult(
        point=point,
        label=point.label,
        started_at=started_at,
        sent=len(records),
        metrics=metrics,
        window_epoch=window,
        arrivals=_arrivals(records, point),
        workload=workload,
        records=records,
    )
