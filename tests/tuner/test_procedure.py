"""run_tuning end to end against the mock server (an endpoint target), and vLLM's /metrics counters."""

import time

import pytest

from probes.core.measurement import NotMeasured
from probes.targets import EndpointTarget
from tests.support.mock_server import mock_url_fixture
from tuner import (
    CalibrationError,
    OperatingPoint,
    TunerSpec,
    TuningLoad,
    calibration_points,
    parse_spec_decode_counters,
    run_tuning,
)

pytestmark = pytest.mark.system

# Two engines (data parallel) export one sample each; the counters are their sums. α = 0.5, k = 3:
# expected accepted per draft = 0.5 + 0.25 + 0.125 = 0.875.
METRICS = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 0.0
# HELP vllm:spec_decode_num_drafts_total Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 60.0
vllm:spec_decode_num_drafts_total{engine="1",model_name="m"} 40.0
# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 180.0
vllm:spec_decode_num_draft_tokens_total{engine="1",model_name="m"} 120.0
# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 50.0
vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="m"} 37.5
"""


def test_spec_decode_counters_are_summed_over_engines_and_give_the_acceptance_rate():
    c = parse_spec_decode_counters(METRICS)
    assert (c.num_drafts, c.num_draft_tokens, c.num_accepted_tokens) == (100.0, 300.0, 87.5)
    assert c.acceptance_rate() == pytest.approx(0.5, abs=1e-9)


def test_metrics_without_speculation_give_none_and_partial_ones_are_an_error():
    assert parse_spec_decode_counters(METRICS.split("# HELP vllm:spec")[0]) is None
    partial = "\n".join(ln for ln in METRICS.splitlines() if "accepted" not in ln) + "\n"
    with pytest.raises(CalibrationError, match="num_accepted_tokens_total"):
        parse_spec_decode_counters(partial)


def test_calibration_points_put_speculation_first_and_the_start_server_last():
    from probes.targets import VllmTarget

    target = VllmTarget(model={"path": "/nonexistent"})
    cfg = TunerSpec(
        slo_p99_ms=6000, start=OperatingPoint(concurrency=16, max_num_seqs=16, spec_k=0),
        knobs={"concurrency": [1, 4, 8, 16, 32], "max_num_seqs": [8, 16, 32], "spec_k": [0, 2, 4]},
    )  # fmt: skip
    pts = [p.key() for p in calibration_points(target, cfg)]
    # The step fit runs at the start's concurrency and at the one nearest a quarter of it (4).
    assert pts == [(16, 16, 2), (4, 16, 0), (16, 16, 0)]
    # An endpoint cannot be restarted: no speculation run.
    ep = EndpointTarget(base_url="http://127.0.0.1:1", model="m")
    assert [p.key() for p in calibration_points(ep, cfg)] == [(4, 16, 0), (16, 16, 0)]
    # A start beyond its batch limit calibrates at the largest concurrency that fits (8) and near a quarter
    # of it: 1 and 4 are equally far from 2 in ratio; the larger runs faster.
    beyond = cfg.model_copy(update={"start": OperatingPoint(concurrency=32, max_num_seqs=8, spec_k=0)})
    assert [p.key() for p in calibration_points(ep, beyond)] == [(8, 8, 0), (4, 8, 0), (32, 8, 0)]


# Two slots: beyond concurrency 2 requests queue, so e2el grows with concurrency.
mock_url = mock_url_fixture("module", ttft_ms=50.0, itl_ms=5.0, slots=2)


def _cfg(**kw) -> TunerSpec:
    base = dict(
        slo_p99_ms=150.0, min_samples=16, max_evaluations=10, time_budget_s=120,
        workload=TuningLoad(input_len=8, output_len=8, num_requests=24),
        start=OperatingPoint(concurrency=4, max_num_seqs=128, spec_k=0),
        knobs={"concurrency": [1, 2, 4, 8], "max_num_seqs": [64, 128], "spec_k": [0, 1]},
        # The search's answer (2): a late mock on a loaded host may rightly fail confirmation there;
        # tests/factsheet/test_build_tuning.py runs the confirmation end to end with wide SLO slack.
        confirm_runs=0,
    )  # fmt: skip
    return TunerSpec(**(base | kw))


def test_run_tuning_on_an_endpoint_calibrates_climbs_and_fixes_restart_knobs(mock_url):
    target = EndpointTarget(base_url=mock_url, model="mock-model", supports_ignore_eos=True)
    lines: list[str] = []
    result = run_tuning(target, _cfg(), log=lines.append)
    # The default point was measured live and is the "before" figure.
    assert result.default.source == "live" and result.default.point.concurrency == 4
    assert result.trace[0].decision == "start" and result.trace[0].source == "live"
    # Calibration: concurrency 4 (start) and 1 (a quarter of it), no speculation run on an endpoint.
    cal = result.calibration
    assert [p.concurrency for p in cal.points] == [1, 4]
    assert not isinstance(cal.simulator, NotMeasured)
    assert isinstance(cal.spec_decode, NotMeasured)
    # Concurrency 4 queues behind 2 slots (e2el ≈ 2 × 85 ms > 150 ms SLO); 2 is the best point.
    assert result.recommended.point.concurrency == 2
    assert result.goodput_ratio.value > 1
    fixed = {f.knob: f for f in result.fixed_knobs}
    assert set(fixed) == {"max_num_seqs", "spec_k"}
    assert all("endpoint target" in f.reason for f in fixed.values())
    # Concurrency 1 was measured once, in calibration, and reused when the climb reached it.
    live_at_1 = [e for e in result.trace if e.source == "live" and e.point.key() == (1, 128, 0)]
    assert len(live_at_1) == 1
    assert not isinstance(result.fidelity, NotMeasured) and "in-sample" in result.fidelity.method
    # Calibration measured concurrency 1 and 4 (in-sample); the climb measured 2 and 8, which the
    # calibrated simulator had not seen: fidelity is reported over those two on their own.
    samples = {row["point"]: row["sample"] for row in result.fidelity.points}
    assert sorted(v for v in samples.values()) == ["in", "in", "out", "out"]
    assert result.fidelity.out_of_sample.n_points == 2
    assert any(line.startswith("tuning 0:") for line in lines)


def test_run_tuning_stops_within_the_time_budget(mock_url):
    target = EndpointTarget(base_url=mock_url, model="mock-model", supports_ignore_eos=True)
    # Each run of 24 requests takes ≈ 1 s at concurrency 2 and ≈ 2 s at 1; 4 s leaves room for few.
    cfg = _cfg(time_budget_s=4.0, max_evaluations=50, noise_z=0.01, start=OperatingPoint(
        concurrency=8, max_num_seqs=128, spec_k=0))  # fmt: skip
    t0 = time.perf_counter()
    result = run_tuning(target, cfg, log=lambda _: None)
    wall = time.perf_counter() - t0
    assert "budget" in result.stop_reason
    assert result.budget.time_used_s <= cfg.time_budget_s + 2.5  # at most one run beyond the estimate
    assert wall < cfg.time_budget_s + 10


def test_run_tuning_reports_progress_over_its_time_budget(mock_url):
    """The tuner's bar runs over its time budget (seconds charged so far of the budget), so the build's
    progress display can say how long tuning can still take."""
    target = EndpointTarget(base_url=mock_url, model="mock-model", supports_ignore_eos=True)
    updates: list[tuple[int, int]] = []
    result = run_tuning(target, _cfg(), log=lambda _: None, progress=lambda d, t: updates.append((d, t)))
    assert len(updates) == len(result.trace)  # one update per trace entry
    assert {total for _, total in updates} == {120}
    done = [d for d, _ in updates]
    assert done == sorted(done) and done[-1] == min(round(sum(e.cost_s for e in result.trace)), 120)
    assert done[-1] > 0
