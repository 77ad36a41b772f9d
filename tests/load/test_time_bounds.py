"""Time is bounded everywhere (issue 30): a wait never outlasts the run's deadline or abort, a request has
a total time limit, and an endless or absurd duration is refused as input (one line, exit 2)."""

import asyncio
import math
import time

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from factsheet.cli.probe import probe_app
from probes.core.errors import InputError
from probes.core.untrusted.limits import MAX_REQUEST_S, MAX_RUN_S, MAX_THINK_MS
from probes.load import runner as runner_mod
from probes.load.drive import RunState
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord
from probes.load.runner import run_point
from probes.load.transport import Pool
from probes.load.workloads.registry import parse_profile
from probes.targets.mock_server import MockServerConfig, running
from tests.load.loadharness import point, run


def test_a_wait_ends_at_the_deadline_not_at_the_next_send():
    lp = point(mode="open", rate=1.0, duration_s=0.3, num_requests=4)
    r = RunState(lp, time.perf_counter())
    t = time.perf_counter()
    assert asyncio.run(r.wait_until(3600.0)) is False  # a 1 h gap under a 0.3 s duration
    assert time.perf_counter() - t < 1.0 and r.deadline_hit


def test_a_wait_ends_soon_after_an_abort():
    lp = point(mode="open", rate=1.0, num_requests=4)
    r = RunState(lp, time.perf_counter())

    async def abort_then_wait() -> bool:
        asyncio.get_running_loop().call_later(0.1, setattr, r, "aborted", "target unreachable")
        return await r.wait_until(1e15)

    t = time.perf_counter()
    assert asyncio.run(abort_then_wait()) is False
    assert time.perf_counter() - t < 0.1 + runner_mod.WAKE_S + 0.5


def test_a_short_wait_is_slept_whole():
    r = RunState(point(mode="open", rate=1.0, num_requests=4), time.perf_counter())
    assert asyncio.run(r.wait_until(0.05)) is True and r.now() >= 0.05


def test_a_slow_rate_under_a_duration_ends_at_the_duration():
    # --request-rate 0.001 --duration 1: the second send is due after ~1,000 s; the run ends at ~1 s.
    t = time.perf_counter()
    res = run(point(mode="open", rate=0.001, duration_s=1.0, num_requests=3, seed=1))
    assert time.perf_counter() - t < 5.0
    assert (res.sent, res.not_sent, res.stop_reason) == (1, 2, "duration")


def test_a_schedule_longer_than_a_day_needs_a_duration():
    with pytest.raises(InputError, match=r"spans .* s, over the limit of 86,400 s: set duration_s"):
        run(point(mode="open", rate=0.001, num_requests=200))


@pytest.mark.parametrize(
    ("field", "value", "limit"),
    [
        ("duration_s", math.inf, MAX_RUN_S),
        ("duration_s", 1e12, MAX_RUN_S),
        ("request_timeout_s", math.inf, MAX_REQUEST_S),
        ("num_requests", 10**12, None),
        ("input_len", 10**12, None),
        ("output_len", 10**12, None),
    ],
)
def test_absurd_sizes_and_durations_are_refused(field, value, limit):
    with pytest.raises(ValidationError, match=field):
        LoadPoint(mode="open", rate=1.0, **{field: value})


def test_an_infinite_think_time_is_refused_with_its_maximum():
    with pytest.raises(
        InputError, match=rf"think_time_ms: Input should be less than or equal to {MAX_THINK_MS:.0f}"
    ):
        parse_profile("chat-sessions", {"think_time_ms": "inf"})


@pytest.mark.parametrize(
    "args",
    [["--duration", "inf"], ["--duration", "1e30"], ["--input-len", "1000000000000"], ["--timeout", "inf"]],
)
def test_the_cli_refuses_absurd_values_in_one_line(tmp_path, args):
    res = CliRunner().invoke(
        probe_app,
        ["load", "--base-url", "http://127.0.0.1:9", "--model", "m", "--request-rate", "1",
         "-o", str(tmp_path / "o"), *args],
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "less than or equal" in res.output
    assert not (tmp_path / "o").exists()


def test_a_stream_that_never_ends_fails_at_the_request_limit():
    # The mock honours max_tokens: 10^6 tokens at 1 ms would stream for 17 minutes.
    cfg = MockServerConfig(ttft_ms=5, itl_ms=1)
    body = (
        b'{"model": "mock-model", "prompt": "hi", "max_tokens": 1000000, "stream": true, "ignore_eos": true}'
    )

    async def go() -> RequestRecord:
        async with Pool(url, 30.0, total_s=0.5) as pool:
            return await pool.request(
                RequestRecord(index=0, sent_s=0.0), time.perf_counter(), body, chat=False
            )

    with running(cfg) as url:
        t = time.perf_counter()
        rec = asyncio.run(go())
    assert time.perf_counter() - t < 3.0
    assert rec.error_kind == "timeout" and "still streaming after 0.5 s" in rec.error
    assert not rec.ok and len(rec.chunk_s) > 10  # it streamed steadily until cut


def test_honest_slo_is_unaffected():
    res = run(point(mode="open", rate=50.0, num_requests=10, duration_s=30.0), SLO(e2el_ms=10_000))
    assert (res.sent, res.stop_reason, res.metrics.failed) == (10, "count", 0)


def _trace_run(tmp_path, stamps_ms, **kw):
    from probes.load.workloads.profiles import TraceProfile

    path = tmp_path / "gap.jsonl"
    path.write_text(
        "".join(f'{{"timestamp": {t}, "input_length": 4, "output_length": 2}}\n' for t in stamps_ms)
    )
    lp = point(mode="open", rate=1.0, num_requests=len(stamps_ms), **kw)
    with running(MockServerConfig(ttft_ms=5, itl_ms=1)) as url:
        return asyncio.run(run_point(url, "mock-model", lp, SLO(), profile=TraceProfile(path=str(path))))


def test_a_trace_gap_of_an_hour_under_a_duration_ends_at_the_duration(tmp_path):
    t = time.perf_counter()
    res = _trace_run(tmp_path, [0, 10, 3_600_000], duration_s=1.0)
    assert time.perf_counter() - t < 5.0
    assert (res.sent, res.not_sent, res.stop_reason) == (2, 1, "duration")


def test_a_trace_spanning_ages_without_a_duration_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"spans 1,000,000,000,000 s, over the limit of 86,400 s"):
        _trace_run(tmp_path, [0, 10**15])
