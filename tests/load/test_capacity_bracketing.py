"""The bracketing search (rule `bracketing`, schema >= 1.10.0): no guessed maximum; doubling until a clear fail,
bisection to the resolution, confirmation steps of k runs that step down on a failed run.

Known truth: a synthetic server holding `slots` users at 100–120 ms E2EL; beyond them a request waits a whole
service (200–240 ms). Under a 130 ms p99 threshold the capacity is exactly `slots` users, whatever its scale.
"""

from __future__ import annotations

import numpy as np
import pytest

from probes.load.capacity import CapacityError, CapacitySearch, find_capacity, point_runner, search_capacity
from probes.load.point import SLO
from probes.targets.mock_server import MockServerConfig, running
from tests.load.loadharness import measured, point

SLO_130 = SLO(e2el_ms=130)


class _Slots:
    """`holds`: the users a long run holds (≤ slots): a short probe passes up to `slots`, a long run (n ≥ 400)
    only up to `holds` (a long run sees further into the tail)."""

    def __init__(self, n: int, slots: int, holds: int | None = None):
        self.n, self.slots, self.holds, self.calls = n, slots, holds or slots, []

    def __call__(self, c):
        self.calls.append(c)
        limit = self.holds if self.n >= 400 else self.slots
        base = 0.100 if c <= limit else 0.200
        e2el = base * (1 + 0.2 * np.arange(self.n) / (self.n - 1))
        return measured(e2el, SLO_130)


def _search(**kw) -> CapacitySearch:
    kw.setdefault("max_value", None)
    kw.setdefault("max_points", 16)
    kw.setdefault("start", 4)
    return CapacitySearch.for_knob("concurrency", rule="bracketing", **kw)


def test_capacity_far_above_the_old_maximum_is_bracketed_without_a_guess():
    probe = _Slots(24, slots=300)
    res = find_capacity(probe, SLO_130, _search(), knob="concurrency")
    assert probe.calls[:8] == [4, 8, 16, 32, 64, 128, 256, 512]  # doubling to the first clear fail
    assert res.capacity == 300 and res.bracket == (300, 301)
    assert res.range[1] == 301  # the upper end: a clear fail (p99 interval wholly above 130 ms)
    assert "bracket narrowed" in res.stop_reason
    assert res.search.max_value is None and res.method.startswith(
        "doubling from the start value until a clear"
    )


def test_a_cap_that_binds_is_named():
    res = find_capacity(_Slots(24, slots=300), SLO_130, _search(max_value=100), knob="concurrency")
    assert res.capacity == 100 and res.bracket == (100, None)
    assert "cap (max_value 100)" in res.stop_reason


def test_the_point_budget_leaves_a_wider_bracket_stated():
    res = find_capacity(_Slots(24, slots=300), SLO_130, _search(max_points=10), knob="concurrency")
    assert res.bracket == (256, 320)  # 8 doublings to 512, then 384 and 320 fail: the 10 points are spent
    assert "point budget (10)" in res.stop_reason


def test_a_failed_repeat_confirms_again_lower_down():
    probe, confirm, repeat = _Slots(24, slots=300), _Slots(460, 300), _Slots(460, 300, holds=297)
    res, repeats = search_capacity(
        probe, SLO_130, _search(confirm_runs=3, max_confirmations=3, confirm_step="bisect"),
        knob="concurrency", confirm=confirm, repeat=repeat,
    )  # fmt: skip
    # The probes pass 296 and 300 (fail 301). At 300 the confirmation passes and its first repeat fails: the
    # step's runs join the points, and the answer steps down to the middle of [296, 300]: 298 fails likewise,
    # then 297 holds in all 3 runs.
    assert confirm.calls == [300, 298, 297] and repeat.calls == [300, 298, 297, 297]
    assert res.capacity == 297 and res.confirmed is True and res.bracket == (297, 298)
    steps = [(p.value, p.passed) for p in res.points if p.confirmation]
    assert steps == [(300, True), (300, False), (298, True), (298, False), (297, True)]
    assert [(p.value, p.passed) for p in repeats] == [(297, True), (297, True)]


def test_a_step_that_never_holds_leaves_the_answer_unconfirmed():
    res, repeats = search_capacity(
        _Slots(24, slots=300), SLO_130, _search(confirm_runs=3, max_confirmations=1),
        knob="concurrency", confirm=_Slots(460, 300), repeat=_Slots(460, 300, holds=200),
    )  # fmt: skip
    assert res.confirmed is False and repeats == [] and res.capacity == 296  # 300's last run failed
    assert "no confirmation step of 3 run(s) held" in res.stop_reason


def test_a_capped_search_needs_its_maximum():
    with pytest.raises(CapacityError, match="max_value"):
        find_capacity(_Slots(24, 8), SLO_130, CapacitySearch.for_knob("concurrency", max_value=None))


@pytest.mark.system
def test_a_mock_servers_slots_far_above_the_old_maximum_are_found():
    """The mock serves 100 requests at once (TTFT 300 ms); a 101st waits a whole service (300 + 7 · 5 = 335 ms),
    so its TTFT is ≥ 635 ms. Under a TTFT p99 threshold of 500 ms the capacity is 100 users (101 at the edge:
    one user in 101 waits, 1 % of requests, on the p99 itself; from 102 on ≥ 2 % wait): above the old
    default maximum of 64, found with no maximum given. Each probe sends two requests per user. The mock is
    only ever late (a busy client's 100 streams add tens of ms): the threshold leaves 200 ms of slack."""
    slo = SLO(ttft_ms=500, p99_metric="ttft_ms")
    with running(MockServerConfig(ttft_ms=300, itl_ms=5, slots=100)) as url:
        template = point(concurrency=1, num_requests=24)

        def run(c):
            return point_runner(url, "mock-model", template.model_copy(update={"num_requests": 2 * c}), slo,
                                knob="concurrency")(c)  # fmt: skip

        res = find_capacity(run, slo, _search(start=16, max_points=12), knob="concurrency")
    assert [p.value for p in res.points][:4] == [16, 32, 64, 128]  # 128: a clear fail (every TTFT ≥ 635 ms)
    assert res.capacity in (100, 101) and res.bracket == (res.capacity, res.capacity + 1)
    assert res.range[1] is not None and res.range[1] <= 128


def test_a_search_stopped_by_its_budget_states_the_points_it_made_and_replays():
    """`more` (the build's time budget) stops the search after 9 probes; the result states max_points 9, so a
    replay from the stated parameters makes the same probes and stops where the build did."""
    res, _ = search_capacity(
        _Slots(24, slots=300), SLO_130, _search(), knob="concurrency", more=lambda n, value: n < 9
    )
    assert len(res.points) == 9 and res.search.max_points == 9 and res.bracket == (256, 384)
    assert "point budget (9)" in res.stop_reason
    again = find_capacity(_Slots(24, slots=300), SLO_130, res.search, knob="concurrency")
    assert again == res
