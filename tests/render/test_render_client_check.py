"""The page shows each run's client check (schema 1.9.0, issue 31 item 1): for a load point its verdict, the
workers that sent it, their event-loop lag and, when client-bound, why; for a capacity search each run's
verdict and lag beside the reason a probe failed. Known truth: client checks built from known lag samples."""

from __future__ import annotations

import pytest

from factsheet.document.schema import CapacitySection, RecordsFile
from factsheet.render import render_html
from probes.core.measurement import summarize
from probes.load.capacity import CapacitySearch, find_capacity
from probes.load.metrics import compute_metrics
from probes.load.point import SLO
from probes.load.records import RequestRecord
from probes.load.workers.check import ClientCheck, WorkerCheck
from tests.render.page import Page
from tests.support import sheet_fixture as fx

# 200 lag samples: 196 at 0.5 ms and 4 at 100 ms (a loop blocked 100 ms now and then): p50 0.5, p99 100
# (rank 0.99 × 199 = 197.01 falls among the four).
QUIET = [0.5] * 200
STALLED = [0.5] * 196 + [100.0] * 4
WHY = "worker 0: loop lag p99 100 ms > 5 % of ttft p99 68.2 ms"


def _check(lag: list[float], workers: int = 1) -> ClientCheck:
    d = summarize(lag, unit="ms", definition="lateness of a 10 ms timer")
    bound = max(lag) > 1
    per = [
        WorkerCheck(worker=w, sent=10, loop_lag_ms=d, client_bound=bound, reasons=[WHY[10:]] if bound else [])
        for w in range(workers)
    ]
    return ClientCheck(
        workers=workers, event_loop="asyncio", loop_lag_ms=d, per_worker=per, client_bound=bound,
        write_delay_ms=summarize([0.25] * 10, unit="ms", definition="written_s − sent_s"),
        client_bound_reasons=[WHY] if bound else [],
    )  # fmt: skip


def _probe(c: int):
    recs = [RequestRecord(index=i, sent_s=i * 0.1, first_chunk_s=i * 0.1 + 0.05,
                          chunk_s=[i * 0.1 + 0.05, i * 0.1 + 0.09], end_s=i * 0.1 + 0.09, output_tokens=2)
            for i in range(24)]  # fmt: skip

    class R:
        metrics = compute_metrics(recs, SLO(e2el_ms=1000))
        arrivals = None
        client = _check(STALLED if c >= 4 else QUIET)

    return R()


@pytest.fixture(scope="module")
def shown() -> tuple[Page, str]:
    """The page, and the label of its client-bound load point."""
    sheet = fx.build_sheet(fx.load_points())
    points = sheet.load.points
    # point 1 (c=1) valid with one worker; point 2 (c=4) sent by two workers, client-bound
    one = points[0].model_copy(
        update={"result": points[0].result.model_copy(update={"client": _check(QUIET)})}
    )
    two = points[1].model_copy(
        update={"result": points[1].result.model_copy(update={"client": _check(STALLED, workers=2)})}
    )
    search = CapacitySearch.for_knob("concurrency", start=1, max_value=8)
    result = find_capacity(_probe, SLO(e2el_ms=1000), search, knob="concurrency")
    records = [
        RecordsFile(path=f"records/capacity-{i:02d}.jsonl", sha256="sha256:" + "0" * 64, records=24)
        for i in range(1, len(result.points) + 1)
    ]
    load = sheet.load.model_copy(
        update={
            "points": [one, two, *points[2:]],
            "capacity": CapacitySection(result=result, records=records),
        }
    )
    return Page.parse(render_html(sheet.model_copy(update={"load": load}))), two.result.label


def test_each_load_point_states_its_client_check(shown):
    page, label = shown
    text = page.section("load").text
    assert (
        "Client check: valid — 1 worker (processes, asyncio); event-loop lag p99 0.50 ms, p50 0.50 ms "
        "(n = 200, a 10 ms timer); write delay p99 0.25 ms." in text
    )
    assert "Client check: client-bound — 2 workers (processes, asyncio); event-loop lag p99 100.00 ms" in text
    # one flag names every client-bound point with why, once (not again from the arrivals rule: a closed loop
    # has none); another point of the fixture may be client-bound too when its host is busy
    (flag,) = [e.text for e in page.section("load").iter("div") if e.text.startswith("Client-bound:")]
    assert f"at {label}" in flag and text.count(WHY) == 1
    assert "the client's own delay could move the reported figures beyond their resolution" in flag
    if flag.count(" at ") == 1:  # the stalled point alone
        assert f"Client-bound: at {label} the client's own delay" in flag
        assert f"resolution ({WHY}); this point partly measures the client" in flag
    else:
        assert f"at {label} ({WHY})" in flag and "these points partly measure the client" in flag


def test_the_capacity_search_shows_each_runs_client_check_beside_its_verdict(shown):
    load = shown[0].section("load")
    runs = [r for t in load.tables() for r in t if len(r) == 10 and r[2] in ("probe", "confirmation")]
    # doubling from 1: every value passes (the check is stated beside the verdict, not judged), 4 and 8 flagged
    assert [(r[1], r[3]) for r in runs] == [("1", "pass"), ("2", "pass"), ("4", "pass"), ("8", "pass")]
    assert (
        "Client check of each run (stated beside its verdict, not judged by the pass rule: a client-bound run's "
        "latencies may be inflated by its client's own delay): #1 valid, 1 worker, loop lag p99 0.50 ms; #2 "
        "valid, 1 worker, loop lag p99 0.50 ms; #3 client-bound, 1 worker, loop lag p99 100.00 ms; #4 client-bound, 1 "
        "worker, loop lag p99 100.00 ms." in load.text
    )
