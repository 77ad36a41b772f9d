"""The plan's estimate of a capacity search on a latency law (factsheet/builder/budget.py): the search's own rule
run on E2EL growing linearly in users, against a law whose capacity is known.

Known truth: E2EL 500 ms at 1 user and 655 ms at 32 (5 ms a user), so under a 2.5 s p99 E2EL threshold the
capacity is 401 users; a search from 32 doubles to 512 (3.05 s: a clear fail), then bisects."""

from __future__ import annotations

import math

import pytest

from factsheet.builder.budget import (
    Growth,
    PlannedSearch,
    confirm_value,
    search_confirm_s,
    search_probes,
    simulate,
)
from factsheet.document.plan import Calibration
from factsheet.spec.build import CapacitySpec
from probes.load.point import SLO

pytestmark = pytest.mark.unit

CAL = Calibration(e2el_ms=500.0, ttft_ms=10.0, tpot_ms=7.8, startup_ms=50.0)
LAW = Growth(users=32, e2el_ms=655.0, from_users=1, from_ms=500.0)
SLO_E2EL = SLO(e2el_ms=2500, p99_metric="e2el_ms")
SEARCH = PlannedSearch(
    CapacitySpec(start=32, num_requests=64, max_points=16, confirm_requests=460), None, "c"
)


def test_the_search_runs_on_the_law_to_its_capacity():
    sim = simulate(CAL, LAW, SEARCH, SLO_E2EL, 16)
    assert sim is not None and sim.confirm_value in (400, 401)  # 401 at exactly 2.5 s: rounding may fail it
    made, total = search_probes(CAL, LAW, SEARCH, SLO_E2EL, 16)
    assert made == len(sim.probes_s) < 16  # narrowed to one user before its point budget
    # the doubling's five probes: 2 users' worth of requests each (2 rounds) at the law's E2EL, plus start-up
    doubling = [0.05 + 2 * (0.5 + 0.005 * (v - 1)) for v in (32, 64, 128, 256, 512)]
    assert sim.probes_s[:5] == pytest.approx(doubling)
    assert total == pytest.approx(sum(sim.probes_s))
    # the confirmation at its answer: 460 requests at ~400 users, 2 rounds of ~2.5 s
    at = confirm_value(CAL, LAW, SEARCH, SLO_E2EL)
    assert at == sim.confirm_value and search_confirm_s(CAL, LAW, SEARCH, at) == pytest.approx(
        0.05 + math.ceil(460 / 400) * 2.495, rel=0.01
    )


def test_no_growth_seen_counts_the_point_budget():
    flat = Growth(users=32, e2el_ms=520.0, from_users=1, from_ms=500.0)  # within 1.1 ×: a round's noise
    assert not flat.seen() and simulate(CAL, flat, SEARCH, SLO_E2EL, 16) is None
    assert search_probes(CAL, flat, SEARCH, SLO_E2EL, 8)[0] == 8
    assert search_probes(CAL, None, SEARCH, SLO_E2EL, 8)[0] == 8
