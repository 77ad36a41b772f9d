"""One worker (the single-process run) states its client check as each of many workers does (issue 31 item 1):
its event loop's lag, sampled throughout the run, judged by the client-bound rule. Known truth: a closed loop
against the mock server on a quiet loop, and the same run with the loop blocked for a known time, again and
again, by a coroutine that shares it."""

from __future__ import annotations

import asyncio
import math

import pytest

from probes.load.metrics import compute_metrics
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord
from probes.load.runner import LATENCY_RESOLUTION, _arrivals, client_check, run_point
from probes.load.workers.check import LAG_INTERVAL_S
from probes.load.workers.child import WorkerReport
from probes.load.workers.fleet import Outcome
from probes.targets.mock_server import MockServerConfig, running
from tests.load.loadharness import STALL_S, block_the_loop, point

# TTFT 500 ms: the rule's resolution is 5 % of it, 25 ms, far above what a quiet loop's 10 ms timer is late by
# (well under 1 ms; a few ms on the 2-core host at load 3) and far below the stall.
TTFT_MS, ITL_MS = 500.0, 5.0


def _closed_loop(stalled: bool):
    cfg = MockServerConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS)
    lp = point(mode="closed", concurrency=8, num_requests=16)

    async def main():
        stall = asyncio.create_task(block_the_loop()) if stalled else None
        try:
            return await run_point(url, cfg.model, lp, SLO())
        finally:
            if stall is not None:
                stall.cancel()

    with running(cfg) as url:
        return asyncio.run(main())


def test_a_quiet_one_worker_closed_loop_is_judged_valid():
    r = _closed_loop(stalled=False)
    c = r.client
    assert r.metrics.completed == 16 and r.arrivals is None  # a closed loop: no schedule to lag behind
    assert c is not None and (c.workers, c.event_loop, c.executor) == (1, "asyncio", "processes")
    assert [(w.worker, w.sent) for w in c.per_worker] == [(0, 16)]
    # sampled throughout the run: a sample every LAG_INTERVAL_S (plus its own lateness) from t0 to the end
    span_s = max(x.end_s for x in r.records)
    assert 0.5 * span_s / LAG_INTERVAL_S <= c.loop_lag_ms.n <= span_s / LAG_INTERVAL_S + 2
    assert c.per_worker[0].loop_lag_ms == c.loop_lag_ms and c.write_delay_ms.n == 16
    assert not c.client_bound and c.client_bound_reasons == [], c.client_bound_reasons
    assert c.loop_lag_ms.p(99) < LATENCY_RESOLUTION * TTFT_MS
    # what "valid" claims: the TTFT stated is the server's to within the resolution
    assert TTFT_MS <= r.metrics.ttft_ms.p(50) <= TTFT_MS * (1 + LATENCY_RESOLUTION)


def test_a_one_worker_closed_loop_whose_loop_is_blocked_is_client_bound_by_its_loop_lag():
    r = _closed_loop(stalled=True)
    c = r.client
    assert r.metrics.completed == 16
    assert c is not None and c.workers == 1
    # the known stall, read back: the lag's p99 is a timer that waited out a whole stall (less up to one
    # interval: it was due some time into it), while most samples fell between stalls
    assert 1000 * (STALL_S - 2 * LAG_INTERVAL_S) <= c.loop_lag_ms.p(99) <= 2000 * STALL_S
    assert c.loop_lag_ms.p(50) < 1000 * STALL_S / 2
    assert c.client_bound and c.per_worker[0].client_bound
    assert c.client_bound_reasons and all(
        x.startswith("worker 0: loop lag p99 ") and "> 5 % of " in x for x in c.client_bound_reasons
    ), c.client_bound_reasons


def test_one_open_loop_worker_states_the_arrivals_rule_once_beside_its_loop_lag():
    # 100 requests scheduled every 10 ms, sent 3 % slower: the arrivals rule fails by the achieved rate
    # (by sent_s and by the last byte); the loop's lag (0.2 ms) is well within 5 % of a 20 ms TTFT
    lp = LoadPoint(mode="open", rate=100.0, burstiness=math.inf, num_requests=100, input_len=16, output_len=1)
    recs = []
    for i in range(100):
        sent = 0.0103 * i
        end = sent + 0.020
        recs.append(RequestRecord(index=i, scheduled_s=0.01 * i, sent_s=sent, written_s=sent, first_chunk_s=end,
                                  chunk_s=[end], end_s=end, output_tokens=1))  # fmt: skip
    metrics = compute_metrics(recs, SLO())
    whole = _arrivals(recs, lp, metrics)  # the whole run's arrivals, as the run states them
    quiet = WorkerReport(worker=0, sent=100, loop_lag_ms=[0.2] * 100)
    c = client_check(recs, lp, metrics, whole, Outcome(recs, [quiet], 0.0, 0.0))
    assert whole.client_bound and c.client_bound
    # the one worker's share is the whole run: each arrivals reason once, naming the worker
    assert c.client_bound_reasons == [f"worker 0: {why}" for why in whole.client_bound_reasons]
    assert c.per_worker[0].achieved_fraction == whole.achieved_fraction == pytest.approx(1 / 1.03, rel=1e-3)
    laggy = WorkerReport(worker=0, sent=100, loop_lag_ms=[0.2] * 90 + [5.0] * 10)
    c = client_check(recs, lp, metrics, whole, Outcome(recs, [laggy], 0.0, 0.0))
    first = c.client_bound_reasons[0]  # TTFT and E2EL are one figure here (one token): either may be named
    assert first.startswith("worker 0: loop lag p99 5 ms > 5 % of ") and first.endswith(" p99 20 ms"), first
    assert c.client_bound_reasons[1:] == [f"worker 0: {why}" for why in whole.client_bound_reasons]
