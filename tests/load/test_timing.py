"""The probe's figures against the mock server's known timing."""

import math

import numpy as np
import pytest

from probes.load.arrivals import arrival_offsets
from probes.load.metrics import request_latencies
from tests.load.loadharness import ITL_MS, OUT, TTFT_MS, point, run

E2EL_MS = TTFT_MS + (OUT - 1) * ITL_MS


# The machine is shared (2 cores, other jobs running): a latency can only be measured late, never
# early. So the fastest request must sit within a few ms of the truth (no request is ever faster),
# while the median gets room for scheduling noise. The precise figures come from bench/.
def _close(dist, truth, tol):
    assert dist.n > 0
    assert truth - 1.0 <= dist.min <= truth + 5.0, f"min {dist.min:.2f} vs {truth}"
    assert truth - 1.0 <= dist.p(50) <= truth + tol, f"p50 {dist.p(50):.2f} vs {truth}"


def _gap_close(dist, truth, tol=1.5):
    # A late chunk shortens the next gap, so gaps scatter both ways around the truth.
    assert abs(dist.p(50) - truth) <= tol, f"p50 {dist.p(50):.2f} vs {truth}"


def test_closed_loop_matches_known_timing():
    r = run(point(mode="closed", concurrency=4, num_requests=32))
    m = r.metrics
    assert (m.completed, m.failed, m.measured) == (32, 0, 32)
    _close(m.ttft_ms, TTFT_MS, 15.0)
    _gap_close(m.tpot_ms, ITL_MS)
    _gap_close(m.itl_ms, ITL_MS)
    _close(m.e2el_ms, E2EL_MS, 15.0)
    assert m.total_output_tokens == 32 * OUT
    assert m.itl_ms.n == 32 * (OUT - 1)


def test_queueing_when_slots_below_concurrency_is_exactly_as_predicted():
    # 4 users, 2 server slots: the first two are served at once; every later request waits
    # one full service time (e2el) for a slot, so its TTFT is ttft + e2el.
    r = run(point(mode="closed", concurrency=4, num_requests=16), slots=2)
    ttfts = sorted(request_latencies(x)["ttft_ms"] for x in r.records)
    waited = [t for t in ttfts if t > TTFT_MS + E2EL_MS / 2]
    assert len(waited) == 14, ttfts
    assert TTFT_MS - 1 < ttfts[0] < TTFT_MS + 15, ttfts  # includes opening the connection
    # −3 ms: the later users stamp their send a little after the first ones (same event-loop turn).
    assert TTFT_MS + E2EL_MS - 3 < waited[0] < TTFT_MS + E2EL_MS + 3, ttfts
    assert np.median(waited) < TTFT_MS + E2EL_MS + 15, ttfts


@pytest.mark.parametrize("burstiness", [math.inf, 1.0, 0.5])
def test_open_loop_matches_known_timing(burstiness):
    r = run(point(mode="open", rate=40, burstiness=burstiness, num_requests=40, seed=3))
    m, a = r.metrics, r.arrivals
    assert m.completed == 40
    _close(m.ttft_ms, TTFT_MS, 15.0)
    _close(m.e2el_ms, E2EL_MS, 15.0)
    assert a.scheduled_rate is not None and abs(a.achieved_fraction - 1) < 0.02
    assert a.send_lag_ms.min < 1.0
    # Sends follow the drawn schedule, not chained sleeps: lateness never accumulates.
    assert max(x.sent_s - x.scheduled_s for x in r.records) < 0.05


def test_max_concurrency_queues_on_the_client_not_the_server():
    r = run(point(mode="open", rate=400, burstiness=math.inf, num_requests=8, max_concurrency=2))
    recs = r.records
    assert [x.queued_s for x in recs[:2]] == pytest.approx([0, 0], abs=2e-3)
    for x in recs:
        in_flight = sum(1 for y in recs if y.sent_s <= x.sent_s < y.end_s)
        assert in_flight <= 2
    for x in recs[2:]:
        # A queued request leaves the client queue when an earlier one completes, not later.
        assert x.queued_s > 0.02
        assert min(abs(x.sent_s - y.end_s) for y in recs if y.index < x.index) < 0.005
    _close(r.metrics.ttft_ms, TTFT_MS, 15.0)  # the server never queued: TTFT stays at its truth


@pytest.mark.parametrize("burstiness", [math.inf, 1.0, 0.25, 4.0])
def test_arrival_gaps_have_the_gamma_shape(burstiness):
    gaps = np.diff(arrival_offsets(20000, rate=50.0, burstiness=burstiness, seed=1))
    assert gaps.mean() == pytest.approx(1 / 50, rel=0.03)
    cv = gaps.std() / gaps.mean()
    assert cv == pytest.approx(0.0 if math.isinf(burstiness) else 1 / math.sqrt(burstiness), abs=0.03)


def test_warmup_and_cooldown_are_outside_the_window():
    r = run(point(mode="closed", concurrency=1, num_requests=10, warmup_requests=3, cooldown_requests=2))
    assert r.metrics.measured == 5
    assert r.metrics.window_start_s == r.records[3].sent_s
    assert r.metrics.window_end_s == r.records[7].end_s
    assert r.window_epoch[0] == pytest.approx(r.started_at + r.records[3].sent_s)


def test_duration_bounds_the_run():
    r = run(point(mode="closed", concurrency=2, num_requests=1000, duration_s=0.4))
    assert r.stop_reason == "duration"
    assert 0 < r.sent < 1000 and r.sent + r.not_sent == 1000
    assert r.metrics.completed == r.sent


def test_client_bound_flag_names_its_reasons():
    from probes.load.metrics import compute_metrics
    from probes.load.point import SLO
    from probes.load.records import RequestRecord
    from probes.load.runner import _arrivals

    lp = point(mode="open", rate=100, burstiness=math.inf, num_requests=100)

    def arrivals(lag_s, stretch, ttft_s):
        recs = []
        for i in range(100):
            sent = i / 100 * stretch + lag_s
            recs.append(RequestRecord(index=i, scheduled_s=i / 100, sent_s=sent, first_chunk_s=sent + ttft_s,
                                      chunk_s=[sent + ttft_s], end_s=sent + ttft_s, output_tokens=1))  # fmt: skip
        return _arrivals(recs, lp, compute_metrics(recs, SLO()))

    on_time = arrivals(0.0002, 1.0, 0.020)
    assert not on_time.client_bound and on_time.achieved_fraction == pytest.approx(1.0)
    slow = arrivals(0.0002, 1.03, 0.020)  # sends 3 % slower than scheduled
    assert slow.client_bound and "below the schedule" in slow.client_bound_reasons[0]
    laggy = arrivals(0.002, 1.0, 0.020)  # every send 2 ms late: 10 % of a 20 ms TTFT
    assert laggy.client_bound and laggy.client_bound_reasons[0].startswith("send-lag p50 2 ms > 5 % of ")
    # The same 2 ms against a 200 ms TTFT is 1 %: within the resolution figures are stated to.
    assert not arrivals(0.002, 1.0, 0.200).client_bound
    assert "5 %" in on_time.client_bound_rule and "98 %" in on_time.client_bound_rule


def test_chat_endpoint_streams_deltas():
    r = run(point(mode="closed", concurrency=2, num_requests=6, endpoint="chat"))
    m = r.metrics
    assert (m.completed, m.total_output_tokens) == (6, 6 * OUT)
    _gap_close(m.itl_ms, ITL_MS)
