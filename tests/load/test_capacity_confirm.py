"""Capacity at SLO: confirmation of the answer by a long run, and the answer's uncertainty range.

Known truth: a synthetic server whose E2EL depends on closed-loop users c: up to 4 users a request takes
100–120 ms (uniform spread), from 5 on it queues (×c/4). With a p99 threshold of 130 ms the capacity is
exactly 4 users. Short probes (24 requests) cannot back a p99 claim; a 600-request confirmation can.
"""

from __future__ import annotations

import numpy as np
import pytest

from probes.load.capacity import (
    CapacitySearch,
    _Search,
    _step_down,
    find_capacity,
    judge_point,
    settle_repeats,
)
from probes.load.point import SLO
from probes.load.stats import min_samples
from tests.load.loadharness import measured

SLO_130 = SLO(e2el_ms=130)


class _Server:
    def __init__(
        self, n: int, *, tail_at: int | None = None, seed: int | None = None, sigma: float = 0.0, queue_from=5
    ):
        self.n, self.tail_at, self.calls, self.queue_from = n, tail_at, [], queue_from
        self.rng = np.random.default_rng(seed) if seed is not None else None
        self.sigma = sigma

    def __call__(self, c):
        self.calls.append((c, self.n))
        base = 0.100 if c < self.queue_from else 0.100 * c / 4
        if self.rng is None:
            e2el = base * (1 + 0.2 * np.arange(self.n) / (self.n - 1))
        else:
            e2el = base * np.exp(self.rng.normal(0.0, self.sigma, self.n))
        if self.tail_at is not None and c >= self.tail_at:
            e2el[: max(1, self.n // 50)] = 0.2  # 2 % slow requests: only a long run sees them
        return measured(e2el, SLO_130)


def _find(probe, confirm, **kw):
    search = CapacitySearch.for_knob("concurrency", start=2, max_value=16, max_points=8, **kw)
    return find_capacity(probe, SLO_130, search, knob="concurrency", confirm=confirm)


def test_the_answer_is_confirmed_by_a_run_long_enough_for_its_p99():
    probe, confirm = _Server(24), _Server(600)
    res = _find(probe, confirm)
    assert res.capacity == 4 and res.bracket == (4, 5) and res.confirmed is True
    assert confirm.calls == [(4, 600)]  # one long run, at the answer
    last = res.points[-1]
    assert last.confirmation and last.value == 4 and last.sufficient_samples
    assert last.metrics.e2el_ms.n >= min_samples(99, 0)
    assert not res.insufficient_samples  # the claim rests on the confirmation, not the 24-request probe
    assert all(not p.sufficient_samples for p in res.points if not p.confirmation)
    assert res.range == (4, 5)  # 4 clearly passes (long run), 5 clearly fails (p99 ≥ 150 ms)


def test_without_confirmation_the_answer_says_its_p99_is_indicative():
    res = _find(_Server(24), None)
    assert res.capacity == 4 and res.confirmed is None and res.insufficient_samples
    low, high = res.range
    assert low is None and high == 5  # no 24-request probe can show p99 ≤ 130 ms at 95 %


def test_a_failed_confirmation_steps_the_answer_down():
    # From 4 users on, 2 % of requests are slow: the 24-request probes miss it, a long run does not.
    probe, confirm = _Server(24, tail_at=4), _Server(600, tail_at=4)
    probe.tail_at = None
    res = _find(probe, confirm)
    assert confirm.calls == [(4, 600), (3, 600)]
    assert res.capacity == 3 and res.bracket == (3, 4) and res.confirmed is True
    assert res.range == (3, 4)  # the long run at 4 clearly fails
    assert "not confirmed" not in res.stop_reason


def test_an_answer_never_confirmed_says_so():
    probe, confirm = _Server(24), _Server(600, tail_at=1)
    res = _find(probe, confirm, max_confirmations=2)
    assert confirm.calls == [(4, 600), (3, 600)]
    assert res.confirmed is False and res.capacity == 2 and "not confirmed" in res.stop_reason


@pytest.mark.parametrize("seeds", [(0, 1), (2, 3), (4, 5)])
def test_two_builds_agree_within_the_stated_range(seeds):
    """Noisy server (log-normal spread, σ 0.08): two searches may land on different answers, but each
    answer lies within the range the other states."""
    results = []
    for seed in seeds:
        probe = _Server(24, seed=seed, sigma=0.08)
        confirm = _Server(600, seed=seed + 100, sigma=0.08)
        results.append(_find(probe, confirm))
    for a, b in (results, results[::-1]):
        low, high = a.range
        assert low is not None and high is not None
        assert low <= b.capacity < high, (a.capacity, a.range, b.capacity)


def test_a_bisecting_step_down_reaches_what_a_long_run_holds_where_stepping_by_one_cannot():
    """Short probes pass up to 16 (no queue in them); a long run sees a 2 % tail from 11 users on, so what a
    long run holds is 10. Stepping down by one spends three confirmations on 16, 15, 14; bisecting goes 16,
    then 12 (between 8, the highest probe below, and 16), then 10, which holds: bracket [10, 12)."""
    kw = {"max_confirmations": 3}
    one = _find(_Server(24, queue_from=99), _Server(600, tail_at=11, queue_from=99), **kw)
    assert [p.value for p in one.points if p.confirmation] == [16, 15, 14] and one.confirmed is False
    confirm = _Server(600, tail_at=11, queue_from=99)
    res = _find(_Server(24, queue_from=99), confirm, confirm_step="bisect", **kw)
    assert [c for c, _ in confirm.calls] == [16, 12, 10]
    assert res.confirmed is True and res.capacity == 10 and res.bracket == (10, 12)
    assert res.search.confirm_step == "bisect" and one.search.confirm_step == "one"


def test_bisecting_between_adjacent_values_confirms_the_lower_one():
    # probes pass at 2 and 4 (queueing from 5 fails 8); long runs hold only up to 2: 4 fails, then 3, then 2.
    confirm = _Server(600, tail_at=3)
    res = _find(_Server(24), confirm, confirm_step="bisect", max_confirmations=3)
    assert [c for c, _ in confirm.calls] == [4, 3, 2] and res.capacity == 2 and res.confirmed is True


def test_bisect_long_steps_below_the_probes_a_failed_long_run_discredits():
    """Short probes pass up to 12 and fail from 13 (a queue); long runs see a 2 % tail from 9 users on, so
    what a long run holds is 8. After 12 fails, `bisect` steps to 10, between 12 and 8 (the highest probe
    passing below it), and fails again: two confirmations spent, none held. `bisect-long` counts only long
    runs' passes: none yet, so it halves towards the lowest value a probe passed, 2 → 7, which holds."""

    def short(c):
        return _Server(24, queue_from=99 if c < 13 else 5)(c)

    bisect_confirm = _Server(600, tail_at=9, queue_from=99)
    old = _find(short, bisect_confirm, confirm_step="bisect", max_confirmations=2)
    assert [c for c, _ in bisect_confirm.calls] == [12, 10] and old.confirmed is False
    confirm = _Server(600, tail_at=9, queue_from=99)
    res = _find(short, confirm, confirm_step="bisect-long", max_confirmations=2)
    assert [c for c, _ in confirm.calls] == [12, 7]
    assert res.confirmed is True and res.capacity == 7 and res.search.confirm_step == "bisect-long"


def test_bisect_long_halves_towards_a_value_a_long_run_held():
    """Once a long run has held a value (7) below the failed one (12), `bisect-long` halves towards it, where
    `bisect` halves towards the highest probe that passed (8)."""
    search = _Search(lambda v: None, "concurrency", None)
    for value, ok, long_run in ((2, True, False), (4, True, False), (8, True, False), (7, True, True),
                                (12, False, True)):  # fmt: skip
        e2el = np.full(600 if long_run else 24, 0.1 if ok else 0.2)
        search.points.append(judge_point(value, measured(e2el, SLO_130), None, confirmation=long_run))
    assert _step_down(search, 12, 0.05, "bisect-long") == 9  # between 7 (a long run held it) and 12
    assert _step_down(search, 12, 0.05, "bisect") == 10  # between 8 (a probe passed it) and 12


def test_bisect_long_after_a_marginal_step_halves_towards_the_probes():
    """A step that failed in a later run (24 held in its first run, failed in its second) says 24 is marginal,
    not that the probes below it mislead: the next step is the middle towards the highest probe that passed
    (16 → 20). A step that failed outright halves towards the lowest probe that passed (4 → 14)."""

    def search_with(*runs):
        search = _Search(lambda v: None, "concurrency", None)
        for value, ok, long_run in ((4, True, False), (8, True, False), (16, True, False), (32, False, False),
                                    *runs):  # fmt: skip
            e2el = np.full(600 if long_run else 24, 0.1 if ok else 0.2)
            search.points.append(judge_point(value, measured(e2el, SLO_130), None, confirmation=long_run))
        return search

    marginal = search_with((24, True, True), (24, False, True))
    assert _step_down(marginal, 24, 0.05, "bisect-long") == 20
    outright = search_with((24, False, True))
    assert _step_down(outright, 24, 0.05, "bisect-long") == 14


def _repeat(value: float, server: _Server, *, at: int | None = None):
    """One more long run at `value` (served as `at` users would be, when given), judged as the confirmation it
    repeats."""
    return judge_point(value, server(at or int(value)), None, confirmation=True)


def test_repeats_that_all_hold_leave_the_answer_as_it_is():
    result = _find(_Server(24), _Server(600))
    assert (result.capacity, result.confirmed) == (4, True)
    again = [_repeat(4, _Server(600)), _repeat(4, _Server(600))]
    assert settle_repeats(result, again) == result


def test_a_repeat_that_fails_takes_the_answer_down_to_what_every_run_held():
    """The confirmation at 4 passed; a repeat at 4 met a deployment twice as slow (every request 200–240 ms,
    as 8 users are served, > 130 ms): 4 held in 2 of 3 runs, so the answer is the highest other value whose
    run passed, unconfirmed. The failed repeat is a clear fail within its run (600 samples), but another run
    at 4 clearly passed: the runs disagree, so 4 bounds the range neither way; 5 (a probe whose 24 requests
    took 125–150 ms, its p99 interval above 130 ms) does."""
    result = _find(_Server(24), _Server(600))
    settled = settle_repeats(result, [_repeat(4, _Server(600)), _repeat(4, _Server(600), at=8)])
    passed = [p.value for p in result.points if p.passed and p.value < 4]
    assert settled.capacity == max(passed) and settled.confirmed is False
    assert settled.bracket == (max(passed), 4) and settled.range == (None, 5)
    assert "held in 2 of 3 runs" in settled.stop_reason
    # a repeat cannot rescue a confirmation that failed: that value was never the answer
    last = result.points[-1].model_copy(update={"passed": False})
    failed = result.model_copy(update={"points": [*result.points[:-1], last]})
    assert settle_repeats(failed, [_repeat(4, _Server(600))]) == failed
