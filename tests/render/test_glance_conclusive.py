"""Page 1 says what the evidence supports (known truth: hand-built records on a slow host's scale).

The scenario: under a 4,500 ms p99 E2EL SLO a short probe at concurrency 1 passes, 2 fails, and the long
confirmation at 1 (499 requests) has p99 4,743 ms with its 95 % CI [4,611, 5,281] ms wholly above the SLO,
so no concurrency meets it; the sweep's busiest point (concurrency 16, 63 requests, every one above the SLO)
completed the most requests in a single sweep point but says less. Page 1 must state the confirmation, call
its p99 a conclusive fail and say that no concurrency meets the SLO; a CI straddling the SLO stays
"insufficient".
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from factsheet.document.schema import CapacitySection, LoadPointEntry, LoadSection, RecordsFile
from factsheet.render import render_html
from factsheet.render.glance import glance_rows
from probes.core.measurement import NotMeasured
from probes.load.capacity import CapacitySearch, find_capacity
from probes.load.metrics import compute_metrics
from probes.load.point import SLO
from probes.load.records import RequestRecord
from tests.render.page import Page
from tests.support import sheet_fixture as fx

SLO_4500 = SLO(e2el_ms=4500, p99_metric="e2el_ms")
# 499 E2ELs (ms) in rank order: for n = 499 the 95 % order-statistic interval of p99 is [X(489), X(499)] and
# p99 (linear) is X(494) + 0.02 (X(495) − X(494)) = 4,743; eleven requests lie above 4,500.
ABOVE = [4611, 4650, 4680, 4700, 4720, 4740, 4890, 5000, 5100, 5200, 5281]
CONCLUSIVE = list(np.linspace(2500, 4400, 488)) + ABOVE
# The same, but X(489) at 4,400: the interval [4,400, 5,281] straddles the SLO (p99 4,743 is still above it).
STRADDLING = list(np.linspace(2500, 4390, 488)) + [4400] + ABOVE[1:]
BUSY = list(np.linspace(6000, 9000, 60)) + [9500, 10000, 10500]  # concurrency 16: all 63 above the SLO


def _records(e2el_ms: list[float]) -> list[RequestRecord]:
    """Closed-loop requests one after another, each with 2 output tokens and the given E2EL."""
    recs, t = [], 0.0
    for i, ms in enumerate(e2el_ms):
        s = ms / 1000
        recs.append(RequestRecord(index=i, sent_s=t, first_chunk_s=t + 0.2, chunk_s=[t + 0.2, t + s],
                                  end_s=t + s, output_tokens=2))  # fmt: skip
        t += s
    return recs


class _Run:
    def __init__(self, e2el_ms: list[float]):
        self.metrics = compute_metrics(_records(e2el_ms), SLO_4500)
        self.arrivals = None


def _probe(c: int) -> _Run:
    return _Run([3000 + 10 * i for i in range(24)] if c <= 1 else [6000 + 10 * i for i in range(24)])


def _sheet(confirmation: list[float]):
    search = CapacitySearch.for_knob("concurrency", start=1, max_value=16, max_confirmations=1)
    result = find_capacity(_probe, SLO_4500, search, knob="concurrency", confirm=lambda c: _Run(confirmation))
    base = fx.build_sheet(fx.load_points())
    template = base.load.points[1]  # a closed-loop point of the fixture, re-measured on the slow host
    points = []
    for i, (c, e2el) in enumerate(((1, [3000 + 10 * i for i in range(24)]), (16, BUSY)), 1):
        res = template.result.model_copy(
            update={
                "label": f"c={c}",
                "point": template.result.point.model_copy(update={"concurrency": c}),
                "metrics": compute_metrics(_records(e2el), SLO_4500),
            }
        )
        rf = RecordsFile(path=f"records/load-{i:02d}.jsonl", sha256="sha256:" + "0" * 64, records=len(e2el))
        points.append(LoadPointEntry(result=res, records=rf))
    records = [
        RecordsFile(path=f"records/capacity-{i:02d}.jsonl", sha256="sha256:" + "0" * 64, records=1)
        for i in range(1, len(result.points) + 1)
    ]
    load = LoadSection(points=points, capacity=CapacitySection(result=result, records=records))
    return base.model_copy(update={"load": load, "energy": NotMeasured(reason="not measured (test)")})


@pytest.fixture(scope="module")
def conclusive():
    return _sheet(CONCLUSIVE)


def test_the_scenario_is_as_described(conclusive):
    cap = conclusive.load.capacity.result
    assert [(p.value, p.confirmation, p.passed) for p in cap.points] == [
        (1, False, True), (2, False, False), (1, True, False)
    ]  # fmt: skip
    assert cap.capacity is None
    m = cap.points[-1].metrics
    ci = m.percentile_ci["e2el_ms.p99"]
    assert (m.e2el_ms.n, round(m.e2el_ms.p(99)), round(ci.lower), round(ci.upper)) == (499, 4743, 4611, 5281)
    busy = conclusive.load.points[1].result.metrics
    assert (busy.completed, busy.goodput) == (63, 0.0)  # the most completed requests of the sweep


def test_page_1_states_the_confirmation_and_that_no_concurrency_meets_the_slo(conclusive):
    summary = Page.parse(render_html(conclusive)).section("headline").text
    assert (
        "no concurrency meets the SLO no probed concurrency passed (bracket narrowed to the tolerance; the "
        "answer was not confirmed by a long run): the capacity confirmation run at concurrency 1 (499 "
        "requests) has p99 E2EL 4,743 ms, 95 % CI [4,611, 5,281] ms against the 4,500 ms SLO (n 499): "
        "conclusive fail (the 95 % CI lies wholly above the threshold)"
    ) in summary
    assert (
        "p99 E2EL 4,743.0 ms 95 % CI [4,611.0, 5,281.0] ms; n 499; conclusive fail (the 95 % CI lies wholly "
        "above the threshold) against the 4,500 ms SLO; at the capacity confirmation run at concurrency 1 "
        "(499 requests)"
    ) in summary
    assert "headline load point" not in summary and "10,074" not in summary and "c=16" not in summary
    rows = {r.label: r for r in glance_rows(conclusive)}
    assert rows["p99 E2EL"].status == rows["Capacity at SLO"].status == "bad"


def test_the_verdict_is_in_the_json(conclusive):
    data = json.loads(conclusive.model_dump_json())
    confirmation = data["load"]["capacity"]["result"]["points"][-1]["metrics"]
    assert confirmation["p99_check"]["sufficiency"]["verdict"] == "conclusive_fail"
    assert confirmation["sample_sufficiency"]["e2el_ms"]["verdict"] == "conclusive_fail"
    assert confirmation["sample_sufficiency"]["e2el_ms"]["sufficient"] is False  # early stopping's claim
    probe = data["load"]["capacity"]["result"]["points"][0]["metrics"]
    assert probe["p99_check"]["sufficiency"]["verdict"] == "insufficient"  # 24 requests: a pass undecided


def test_the_capacity_section_calls_the_confirmation_a_conclusive_fail(conclusive):
    load = Page.parse(render_html(conclusive)).section("load")
    runs = [r for t in load.tables() for r in t if len(r) == 10 and r[2] in ("probe", "confirmation")]
    # the search's table of runs: #, knob, run, result, p99, attainment, n, n needed, above, p99 verdict
    assert runs[-1][2] == "confirmation" and runs[-1][6] == "499" and runs[-1][9] == "conclusive fail"


def test_a_ci_straddling_the_slo_stays_insufficient():
    sheet = _sheet(STRADDLING)
    m = sheet.load.capacity.result.points[-1].metrics
    ci = m.percentile_ci["e2el_ms.p99"]
    assert round(ci.lower) == 4400 and round(ci.upper) == 5281 and round(m.e2el_ms.p(99)) == 4743
    assert m.p99_check.sufficiency.verdict == "insufficient"
    summary = Page.parse(render_html(sheet)).section("headline").text
    assert "95 % CI [4,400, 5,281] ms against the 4,500 ms SLO (n 499): insufficient samples" in summary
    assert "conclusive" not in summary
