"""A request's last byte (issue 31 item 1): every record carries `written_s`, whatever the worker count, and
the open loop's client-bound rule reads the achieved rate and the lag by it beside sent_s's. Known truth:
records made with the lag and rates they state, and a run against the mock server on an idle schedule."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from factsheet.document.rules import rule, rule_set
from factsheet.document.schema import LoadPointEntry, LoadSection, RecordsFile
from factsheet.rederive.load import figures, load_points
from probes.core.digests import sha256_bytes
from probes.core.measurement import NotMeasured
from probes.load.metrics import compute_metrics
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord, load_records, record_line, records_jsonl
from probes.load.runner import (
    CLIENT_BOUND_RULE,
    WRITE_LAG,
    Arrivals,
    PointResult,
    _arrivals,
    point_figures,
)
from probes.load.workloads.workload import synthetic_prompts
from tests.load.loadharness import point, run

N, RATE, TTFT_S = 100, 100.0, 0.020  # 5 % of a 20 ms TTFT: the rule's limit is 1 ms
OPEN = LoadPoint(mode="open", rate=RATE, burstiness=math.inf, num_requests=N, input_len=16, output_len=1)


def _records(*, lag_s=0.0002, stretch=1.0, write_s: float | None = 0.0001, write_stretch=1.0):
    """Requests scheduled every 10 ms: sent `lag_s` late and `stretch` slower than scheduled; the last byte
    `write_s` after the send, `write_stretch` slower still (None: no written_s, as records before 1.8.0)."""
    out = []
    for i in range(N):
        sent = i / RATE * stretch + lag_s
        written = None if write_s is None else sent * write_stretch + write_s
        end = max(sent, written or sent) + TTFT_S
        out.append(RequestRecord(index=i, scheduled_s=i / RATE, sent_s=sent, written_s=written, first_chunk_s=end,
                                 chunk_s=[end], end_s=end, output_tokens=1))  # fmt: skip
    return out


SENT_S = rule("client-bound/sent-s")  # the rule before the last byte was read (the registry keeps it)
NOW, THEN = rule_set(rule("client-bound/last-byte").began), rule_set(SENT_S.began)  # records without outcomes


def _judge(records, *, by_sent_s=False) -> Arrivals:
    metrics = compute_metrics(records, SLO())
    arrivals = _arrivals(records, OPEN, metrics)
    return SENT_S.arrivals(arrivals, metrics) if by_sent_s else arrivals


def test_bytes_leaving_slower_than_the_schedule_are_flagged_by_the_last_byte_only():
    recs = _records(write_stretch=1.03)  # started on time, but the last bytes leave 3 % slower
    a = _judge(recs)
    assert a.achieved_fraction == pytest.approx(1.0, abs=1e-6)
    assert a.achieved_fraction_written == pytest.approx(1 / 1.03, rel=1e-3)
    assert a.client_bound and a.client_bound_rule == CLIENT_BOUND_RULE
    assert [r for r in a.client_bound_reasons if "below the schedule" in r] == [
        "achieved rate 97.1/s by the last byte (written_s) is 2.9 % below the schedule"
    ]
    # sent_s alone (the rule before 1.8.0) sees nothing wrong: the case the issue observed
    assert not _judge(recs, by_sent_s=True).client_bound


def test_a_late_last_byte_is_flagged_by_the_write_lag():
    a = _judge(_records(write_s=0.002))  # every last byte 2 ms after its send: 10 % of a 20 ms TTFT
    assert a.send_lag_ms.p(50) == pytest.approx(0.2) and a.write_lag_ms.p(50) == pytest.approx(2.2)
    assert a.write_lag_ms.definition == WRITE_LAG and a.write_lag_ms.n == N
    assert a.client_bound
    assert a.client_bound_reasons[0].startswith("write-lag p50 2.2 ms > 5 % of ")
    assert not any(r.startswith("send-lag") for r in a.client_bound_reasons)
    assert not _judge(_records(write_s=0.002), by_sent_s=True).client_bound


def test_a_client_that_keeps_up_by_both_readings_is_not_flagged():
    a = _judge(_records())
    assert not a.client_bound, a.client_bound_reasons
    assert a.achieved_fraction_written == pytest.approx(1.0, abs=1e-6)
    assert a.write_lag_ms.p(99) == pytest.approx(0.3)


def test_records_without_written_s_are_judged_by_sent_s_as_before():
    a = _judge(_records(write_s=None))
    assert (a.achieved_rate_written, a.achieved_fraction_written, a.write_lag_ms) == (None, None, None)
    assert not a.client_bound
    late = _judge(_records(write_s=None, stretch=1.03)).client_bound_reasons
    assert late[0] == "achieved rate 97.1/s by sent_s is 2.9 % below the schedule"
    assert not any("written_s" in r or r.startswith("write-lag") for r in late)


def test_requests_whose_bytes_never_left_do_not_lower_the_rate_by_the_last_byte():
    recs = _records()
    for r in recs[::10]:  # one in ten refused at connect: no byte left, which is the server's doing
        r.written_s, r.first_chunk_s, r.chunk_s, r.end_s, r.error_kind = None, None, [], None, "connect"
    a = _judge(recs)
    assert a.write_lag_ms.n == 90 and a.achieved_fraction_written == pytest.approx(1.0, abs=1e-6)
    assert not a.client_bound, a.client_bound_reasons


def test_one_worker_records_keep_their_shape_and_add_written_s():
    old = b'{"index":0,"scheduled_s":null,"queued_s":0.0,"sent_s":0.5,"first_chunk_s":null,"chunk_s":[],'
    old += b'"end_s":null,"prompt_tokens":null,"output_tokens":null,"output_tokens_source":null,'
    old += b'"http_status":null,"error_kind":"connect","error":"refused"}\n'
    # a record read from a file written before 1.8.0 (no written_s) is written back byte for byte
    assert records_jsonl(load_records(old)) == old
    line = json.loads(record_line(RequestRecord(index=0, sent_s=0.5, written_s=0.5004)))
    assert line["written_s"] == 0.5004 and "worker" not in line and "session" not in line


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_a_one_worker_run_stamps_every_last_byte(mode):
    # 20 req/s of small requests with 8-token replies (50 + 7 × 5 = 85 ms each) against the in-process mock:
    # most go out on a kept-alive connection, whose request leaves in the one write that starts it.
    kw = {"concurrency": 2} if mode == "closed" else {"rate": 20.0, "burstiness": math.inf}
    r = run(point(mode=mode, num_requests=16, **kw))
    assert r.metrics.completed == 16 and r.client is not None and r.client.workers == 1  # (schema >= 1.9.0)
    assert all(x.worker is None and x.written_s is not None and x.written_s >= x.sent_s for x in r.records)
    assert sorted(x.written_s - x.sent_s for x in r.records)[8] < 0.001
    if mode == "open":
        a = r.arrivals
        assert a.write_lag_ms.n == 16 and a.achieved_fraction_written == pytest.approx(1.0, abs=0.02)


def _sheet(folder: Path, records: list[RequestRecord], arrivals: Arrivals | None = None) -> LoadSection:
    metrics, window, stated = point_figures(OPEN, SLO(), records, 1.7e9)
    _, workload = synthetic_prompts(1, 16, 0)
    result = PointResult(point=OPEN, label=OPEN.label, started_at=1.7e9, sent=N, metrics=metrics,
                         window_epoch=window, arrivals=arrivals or stated, workload=workload)  # fmt: skip
    data = records_jsonl(records)
    (folder / "records").mkdir(exist_ok=True)
    (folder / "records" / "load-01.jsonl").write_bytes(data)
    rf = RecordsFile(path="records/load-01.jsonl", sha256=sha256_bytes(data), records=N)
    # built, not read back: a field the stated arrivals leave unset stays unset, as in an older document
    return LoadSection(points=[LoadPointEntry(result=result, records=rf)], capacity=NotMeasured(reason="x"))


def test_validate_rederives_the_last_byte_figures(tmp_path):
    section = _sheet(tmp_path, _records(write_s=0.002))
    assert section.points[0].result.arrivals.client_bound  # by its write lag
    assert load_points(section, tmp_path, None, NOW) == []
    section.points[0].result.arrivals.write_lag_ms.percentiles["p99"] += 1.0
    section.points[0].result.arrivals.achieved_fraction_written *= 1.01
    found = {d.figure for d in load_points(section, tmp_path, None, NOW)}
    assert found == {"load.points[0].result.arrivals.write_lag_ms.percentiles.p99",
                     "load.points[0].result.arrivals.achieved_fraction_written"}  # fmt: skip


def test_an_older_document_is_replayed_by_the_rule_it_was_judged_by(tmp_path):
    # A 1.7.0 point sent by workers: its records carry written_s, which the rule of its day did not read.
    records = _records(write_s=0.002)
    _, _, then = figures(OPEN, SLO(), records, 1.7e9, (50, 99), THEN)
    assert not then.client_bound and then.client_bound_rule == SENT_S.wording
    assert then.send_lag_ms.definition == "actual send − scheduled send − client queue time"  # its words
    old = then.model_dump(mode="json", exclude={"achieved_rate_written", "achieved_fraction_written",
                                                "write_lag_ms"})  # fmt: skip
    section = _sheet(tmp_path, records, Arrivals.model_validate(old))
    assert load_points(section, tmp_path, None, THEN) == []
    # its verdict is still held to that rule: flipped, it is caught
    section.points[0].result.arrivals.client_bound = True
    assert [d.figure for d in load_points(section, tmp_path, None, THEN)] == [
        "load.points[0].result.arrivals.client_bound"
    ]
    # and held to its own version's rule: today's read of the last byte finds it client-bound
    section.points[0].result.arrivals.client_bound = False
    assert "load.points[0].result.arrivals.client_bound" in {
        d.figure for d in load_points(section, tmp_path, None, NOW)
    }
