"""Bounds stated as bounds (issue 28 items 2-3), on known truth:

- the 1.0.0 fixture's search passed every probe up to its maximum (8): a lower bound, "≥ 8";
- a search whose probes pass at concurrency ≤ 2 and whose long confirmation at 2 fails (p99 E2EL 4,743 ms,
  95 % CI [4,611, 5,281] ms, wholly above the 4,500 ms SLO) settles on 1: "not confirmed", stated with what
  was established, never a value beside the failed run's conclusive fail;
- page 1 states the attainment of the capacity's run and the thresholds it rests on (min_attainment too).
"""

from __future__ import annotations

from pathlib import Path

from factsheet.document.headline.figures import headline
from factsheet.document.schema import CapacitySection, LoadSection, RecordsFile
from factsheet.rederive.validate import load_factsheet
from factsheet.render.glance import glance_rows
from probes.core.measurement import NotMeasured
from probes.load.capacity import CapacitySearch, find_capacity
from tests.render.test_glance_conclusive import CONCLUSIVE, SLO_4500, _Run
from tests.support import sheet_fixture as fx

FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0" / "factsheet.json"


def _rows(sheet) -> dict:
    return {r.label: r for r in glance_rows(sheet)}


def test_an_open_bracket_is_a_lower_bound_on_page_1_and_in_the_data():
    sheet = load_factsheet(FIXTURE)
    assert sheet.load.capacity.result.bracket == (8, None)  # the known truth: no probe failed
    cap = headline(sheet).figure("capacity_at_slo")
    assert (cap.value, cap.lower_bound, cap.verdict) == (8, True, "lower_bound")
    row = _rows(sheet)["Capacity at SLO"]
    assert row.value == "≥ 8 concurrent users"
    assert row.detail.startswith(
        "≥ 8 (every probe up to the search's maximum passed); rests on p99 E2EL ≤ 150 ms;"
    )
    attained = sheet.load.capacity.result.points[-1].metrics.slo_attainment
    assert f"SLO attainment {attained:.1%} over the capacity search probe at concurrency 8" in row.detail


def _sheet(min_attainment=None):
    def probe(c: int) -> _Run:
        return _Run([3000 + 10 * i for i in range(24)] if c <= 2 else [6000 + 10 * i for i in range(24)])

    search = CapacitySearch.for_knob("concurrency", start=1, max_value=16, max_confirmations=1)
    result = find_capacity(
        probe,
        SLO_4500,
        search,
        knob="concurrency",
        min_attainment=min_attainment,
        confirm=lambda c: _Run(CONCLUSIVE),
    )
    records = [
        RecordsFile(path=f"records/capacity-{i:02d}.jsonl", sha256="sha256:" + "0" * 64, records=1)
        for i in range(1, len(result.points) + 1)
    ]
    base = fx.build_sheet(fx.load_points())
    load = LoadSection(points=base.load.points, capacity=CapacitySection(result=result, records=records))
    return base.model_copy(update={"load": load, "energy": NotMeasured(reason="not measured (test)")})


def test_a_failed_confirmation_reads_as_not_confirmed_with_what_was_established():
    sheet = _sheet()
    r = sheet.load.capacity.result
    assert [(p.value, p.confirmation, p.passed) for p in r.points] == [
        (1, False, True), (2, False, True), (4, False, False), (3, False, False), (2, True, False)
    ]  # fmt: skip
    assert (r.capacity, r.confirmed) == (1, False)  # the value whose last run passed: a short probe
    h = headline(sheet)
    cap = h.figure("capacity_at_slo")
    assert (cap.value, cap.verdict, cap.lower_bound) == (1, "not_confirmed", False)
    assert cap.source == "/load/capacity/result/points/0"  # the run at the stated value
    e2el = h.figure("e2el_ms.p99")
    assert (e2el.verdict, e2el.source) == ("conclusive_fail", "/load/capacity/result/points/4/metrics")
    rows = _rows(sheet)
    capacity = rows["Capacity at SLO"]
    assert capacity.value == "not confirmed" and capacity.status == "bad"
    assert capacity.detail.startswith(
        "not confirmed: the long confirmation run(s) at concurrency 2 failed; established: the search probes "
        "passed at 1 (short runs, indicative)"
    )
    assert "concurrent users" not in capacity.value
    # The failed run's p99 is stated as that run's, beside "not confirmed", never beside a value.
    assert rows["p99 E2EL"].detail.endswith(
        "at the capacity confirmation run at concurrency 2 (499 requests)"
    )


def test_min_attainment_is_among_what_the_capacity_rests_on():
    sheet = _sheet(min_attainment=0.9)
    cap = headline(sheet).figure("capacity_at_slo")
    assert cap.rests_on == ["p99 E2EL ≤ 4500 ms", "SLO attainment ≥ 90.0% (min_attainment)"]
    assert "rests on p99 E2EL ≤ 4500 ms and SLO attainment ≥ 90.0% (min_attainment)" in (
        _rows(sheet)["Capacity at SLO"].detail
    )
