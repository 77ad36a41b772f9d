"""The capacity answer is shown with its uncertainty: range, confirmation, and the intervals at the
bracket's ends (known truth: a synthetic server whose capacity is exactly 4 users, see
tests/load/test_capacity_confirm.py)."""

from __future__ import annotations

import numpy as np
import pytest

from factsheet.document.schema import CapacitySection, RecordsFile
from factsheet.render import render_html
from probes.load.capacity import CapacitySearch, find_capacity
from probes.load.metrics import compute_metrics
from probes.load.point import SLO
from probes.load.records import RequestRecord
from tests.render.page import Page
from tests.support import sheet_fixture as fx

SLO_130 = SLO(e2el_ms=130)


def _run(n: int):
    def run(c):
        base = 0.100 if c <= 4 else 0.100 * c / 4
        e2el = base * (1 + 0.2 * np.arange(n) / (n - 1))
        recs = [
            RequestRecord(index=i, sent_s=i * 0.01, first_chunk_s=i * 0.01 + 0.01,
                          chunk_s=[i * 0.01 + 0.01, i * 0.01 + v], end_s=i * 0.01 + v, output_tokens=2)
            for i, v in enumerate(e2el)
        ]  # fmt: skip

        class R:
            metrics = compute_metrics(recs, SLO_130)
            arrivals = None

        return R()

    return run


@pytest.fixture(scope="module")
def page() -> Page:
    search = CapacitySearch.for_knob("concurrency", start=2, max_value=16)
    result = find_capacity(_run(24), SLO_130, search, knob="concurrency", confirm=_run(600))
    records = [
        RecordsFile(path=f"records/capacity-{i:02d}.jsonl", sha256="sha256:" + "0" * 64, records=1)
        for i in range(1, len(result.points) + 1)
    ]
    sheet = fx.empty_sheet()
    sheet = sheet.model_copy(
        update={"load": fx.build_sheet(fx.load_points()).load.model_copy(
            update={"capacity": CapacitySection(result=result, records=records)}
        )}
    )  # fmt: skip
    return Page.parse(render_html(sheet))


def test_capacity_headline_carries_its_range_and_confirmation(page):
    summary = page.section("summary").text
    assert "holds 4 concurrent users at p99 E2EL ≤ 130 ms (the search brackets it within [4, 5))" in summary
    assert (
        "sufficient samples for its p99 (the capacity confirmation run at concurrency 4 (600 requests))"
        in summary
    )


def test_capacity_section_shows_uncertainty_and_bracket_ends(page):
    load = page.section("load")
    table = load.table_after("Capacity at SLO")
    rows = {r[0]: r[1] for r in table}
    assert rows["Uncertainty"].startswith("capacity ≥ low and < high: [4, 5)")
    assert rows["Confirmation"] == "confirmed by a run of 600 measured requests at 4"
    # the bracket's ends name their runs, whose figures are the search table's rows (stated once)
    runs = [r for t in load.tables() for r in t if len(r) == 10 and r[2] in ("probe", "confirmation")]
    ends = rows["Bracket ends"]
    high_at = int(ends.split("highest pass 4 (run #")[1].split(")")[0])
    low_at = int(ends.split("lowest fail 5 (run #")[1].split(")")[0])
    high, low = runs[high_at - 1], runs[low_at - 1]
    # columns: #, knob, run, result, p99 [CI], attainment [CI], n, n needed, above, p99 verdict
    assert (
        high[1] == "4" and high[4].startswith("120 [") and high[6] == "600" and high[9] == "conclusive pass"
    )
    assert low[1] == "5" and low[3].startswith("fail")
    # 24 requests bound the p99 only from below (above the 130 ms threshold: a clear miss).
    assert (
        low[4].startswith("150 [")
        and low[4].split("[")[1].startswith(("14", "15"))
        and low[4].endswith(", —]")
    )
    assert low[5] == "20.8 % [7.1 %, 42.2 %]"  # 5 of 24 good: Clopper–Pearson
    assert low[6] == "24" and low[9] == "conclusive fail"
    assert [r[2] for r in runs][-1] == "confirmation" and runs[-1][1] == "4"
