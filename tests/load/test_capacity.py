import pytest

from probes.load.capacity import CapacityError, CapacitySearch, find_capacity, point_runner
from probes.load.metrics import compute_metrics
from probes.load.point import SLO
from probes.load.records import RequestRecord
from probes.targets.mock_server import MockServerConfig, running
from tests.load.loadharness import point

pytestmark = pytest.mark.system


class _Fake:
    """A point whose e2el is 100 ms / (1 − rate/50): the M/M/1 shape; 200 ms SLO ⇒ capacity 25/s."""

    def __init__(self):
        self.calls = []

    def __call__(self, rate):
        self.calls.append(rate)
        e2el = 0.1 / (1 - rate / 50) if rate < 50 else 10.0
        recs = [
            RequestRecord(
                index=i,
                sent_s=i * 0.01,
                first_chunk_s=i * 0.01 + 0.01,
                chunk_s=[i * 0.01 + 0.01, i * 0.01 + e2el],
                end_s=i * 0.01 + e2el,
                output_tokens=2,
            )
            for i in range(500)
        ]

        class R:
            metrics = compute_metrics(recs, SLO(e2el_ms=200))
            arrivals = None

        return R()


def test_doubling_then_bisection_finds_the_known_capacity():
    fake = _Fake()
    res = find_capacity(
        fake, SLO(e2el_ms=200), CapacitySearch.for_knob("rate", start=4, tolerance=0.02, max_points=16)
    )
    assert fake.calls[:4] == [4, 8, 16, 32]  # doubling until the first failure
    assert res.bracket[0] <= 25 <= res.bracket[1]
    assert res.capacity == pytest.approx(25, rel=0.02)
    assert [p.value for p in res.points] == fake.calls  # every probed point kept
    assert all(p.passed == (p.value < 25) for p in res.points if p.value != 25)  # 25: float tie
    assert "bracket narrowed" in res.stop_reason


def test_failing_start_halves_down():
    res = find_capacity(_Fake(), SLO(e2el_ms=200), CapacitySearch.for_knob("rate", start=40, tolerance=0.05))
    assert [p.value for p in res.points][:2] == [40, 20]
    assert res.capacity == pytest.approx(25, rel=0.05)


def test_capacity_needs_the_p99_threshold():
    with pytest.raises(CapacityError, match="e2el_ms"):
        find_capacity(_Fake(), SLO(ttft_ms=100), CapacitySearch.for_knob("rate", start=1))


def test_concurrency_capacity_equals_the_servers_slots():
    # 4 slots, service 60 + 7·3 = 81 ms: up to 4 users TTFT stays 60 ms, from 5 on requests queue
    # for a whole service time (TTFT ≥ 141 ms). SLO TTFT p99 ≤ 130 ms ⇒ capacity 4 users exactly.
    # The mock is only ever late, so the threshold sits near the failing side: 70 ms of slack for a slow host.
    slo = SLO(ttft_ms=130, p99_metric="ttft_ms")
    with running(MockServerConfig(ttft_ms=60, itl_ms=3, slots=4)) as url:
        runner = point_runner(
            url, "mock-model", point(concurrency=1, num_requests=24), slo, knob="concurrency"
        )
        res = find_capacity(
            runner, slo, CapacitySearch.for_knob("concurrency", start=1, max_value=16), knob="concurrency"
        )
    assert res.capacity == 4 and res.bracket == (4, 5)
    assert [p.value for p in res.points] == [1, 2, 4, 8, 6, 5]
    assert res.insufficient_samples  # 24 requests cannot back a p99 claim
