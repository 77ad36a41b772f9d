"""Every reply is judged, not only timed (issue 40 item 1): each engine's stream shape, played by the mock
server, gives the outcome it should, and a reply cut short never counts as completed."""

import pytest

from probes.load.capacity import judge as judge_point
from probes.load.point import SLO
from probes.load.records import RequestRecord, judge, load_records, records_jsonl
from tests.load.loadharness import OUT, point, run

SLO_LOOSE = SLO(e2el_ms=10_000)


def _record(**kw) -> RequestRecord:
    return RequestRecord(index=0, sent_s=0.0, first_chunk_s=0.1, end_s=0.2, **kw)


@pytest.mark.parametrize(
    ("fields", "ignore_eos", "outcome"),
    [
        ({"max_tokens": 8, "output_tokens": 8, "output_tokens_source": "usage"}, True, "completed"),
        # llama-cpp-python's interrupted stream: [DONE], no finish_reason, one token
        ({"max_tokens": 8, "output_tokens": 1, "output_tokens_source": "usage"}, True, "truncated"),
        ({"max_tokens": 8, "output_tokens": 1, "output_tokens_source": "chunks"}, True, "truncated"),
        # the server's usage is exact: a 'length' it contradicts is not believed
        (
            {"max_tokens": 8, "output_tokens": 5, "output_tokens_source": "usage", "finish_reason": "length"},
            True,
            "truncated",
        ),  # fmt: skip
        # chunks may carry several tokens: the server's 'length' decides
        (
            {
                "max_tokens": 8,
                "output_tokens": 4,
                "output_tokens_source": "chunks",
                "finish_reason": "length",
            },
            True,
            "completed",
        ),  # fmt: skip
        # EOS reached early: allowed only when EOS is not ignored
        (
            {"max_tokens": 8, "output_tokens": 3, "output_tokens_source": "usage", "finish_reason": "stop"},
            False,
            "completed",
        ),  # fmt: skip
        (
            {"max_tokens": 8, "output_tokens": 3, "output_tokens_source": "usage", "finish_reason": "stop"},
            True,
            "truncated",
        ),  # fmt: skip
        ({"max_tokens": 8, "output_tokens": 3, "finish_reason": "abort"}, False, "truncated"),
        ({"max_tokens": 8, "error_kind": "stream_cut", "output_tokens": 2}, True, "failed"),
        ({"max_tokens": None}, True, "completed"),  # a record older than 1.10.0: judged as it was
    ],
)
def test_the_outcome_rule(fields, ignore_eos, outcome):
    assert judge(_record(**fields), ignore_eos) == outcome


def test_a_stream_ending_after_its_finish_reason_without_done_is_complete():
    """transformers serve ends its stream after the finish_reason and usage chunks, without [DONE]."""
    r = run(point(mode="closed", concurrency=2, num_requests=10), SLO_LOOSE, send_done=False)
    m = r.metrics
    assert (m.completed, m.truncated, m.failed) == (10, 0, 0), m.errors
    assert m.finish_reasons == {"length": 10} and m.output_tokens_sources == {"usage": 10}
    assert all(x.outcome == "completed" and x.max_tokens == OUT for x in r.records)


def test_without_usage_output_tokens_are_counted_from_chunks_and_named_so():
    r = run(point(mode="closed", concurrency=1, num_requests=4), SLO_LOOSE, stream_usage="never",
            send_done=False)  # fmt: skip
    m = r.metrics
    assert m.completed == 4 and m.output_tokens_sources == {"chunks": 4}
    assert m.total_output_tokens == 4 * OUT
    assert m.total_input_tokens is None  # the server counted no prompt: no figure, never 0
    assert "tokenizer" in m.definitions["output_throughput"]


def test_interrupted_replies_are_truncated_and_never_good():
    """llama-cpp-python's default: a new request cuts the running stream, which still ends with [DONE]."""
    r = run(point(mode="closed", concurrency=3, num_requests=12), SLO_LOOSE, interrupts=True)
    m = r.metrics
    assert m.truncated >= 8 and m.completed + m.truncated == 12 and m.failed == 0
    assert m.finish_reasons["none"] == m.truncated
    assert m.good <= m.completed and m.slo_attainment == pytest.approx(m.good / 12)
    assert m.request_throughput is None or m.request_throughput * m.duration_s == pytest.approx(m.completed)
    assert any("truncated" in why for why in judge_point(m, None))  # no capacity pass from cut replies


def test_a_server_that_ignores_stream_is_its_own_error():
    r = run(point(mode="closed", concurrency=1, num_requests=3), SLO_LOOSE, ignores_stream=True)
    assert r.metrics.errors == {"not_streamed": 3}
    assert "does not stream" in r.records[0].error


def test_a_stream_cut_mid_reply_is_still_cut():
    r = run(point(mode="closed", concurrency=1, num_requests=4), SLO_LOOSE, drop_every=2, send_done=False)
    assert r.metrics.errors == {"stream_cut": 2} and r.metrics.completed == 2


def test_records_keep_what_was_judged():
    r = run(point(mode="closed", concurrency=1, num_requests=2), SLO_LOOSE)
    back = load_records(records_jsonl(r.records))
    assert [(x.max_tokens, x.finish_reason, x.outcome) for x in back] == [(OUT, "length", "completed")] * 2
    older = RequestRecord(index=0, sent_s=0.0, first_chunk_s=0.1, end_s=0.2)
    assert b"outcome" not in records_jsonl([older])  # an older record is written as it was read
