"""Config validation, knob-to-flag mapping and score figures on known inputs."""

import json

import numpy as np
import pytest

from tuner import OperatingPoint, RunSample, TunerSpec, vllm_server_flags
from tuner.estimates import compute_figures, score_value
from tuner.spec import HwCost, TuningLoad


def test_start_outside_knob_values_names_the_field():
    with pytest.raises(ValueError, match=r"tuning\.start\.concurrency"):
        TunerSpec(slo_p99_ms=1000, start=OperatingPoint(concurrency=3, max_num_seqs=128, spec_k=0))


def test_unordered_knob_values_name_the_field():
    with pytest.raises(ValueError, match=r"tuning\.knobs\.max_num_seqs"):
        TunerSpec(slo_p99_ms=1000, knobs={"max_num_seqs": [8, 4]})


def test_open_loop_needs_a_rate():
    with pytest.raises(ValueError, match=r"rate_rps"):
        TuningLoad(mode="open")


def test_unknown_setting_is_rejected():
    with pytest.raises(ValueError, match="lambda"):
        TunerSpec(slo_p99_ms=1000, **{"lambda": 3})


def test_slo_is_required():
    with pytest.raises(ValueError, match="slo_p99_ms"):
        TunerSpec()


def test_vllm_flags_for_speculation_and_batch_limit():
    flags = vllm_server_flags(OperatingPoint(concurrency=4, max_num_seqs=8, spec_k=3))
    assert flags[:2] == ["--max-num-seqs", "8"]
    assert flags[2] == "--speculative-config"
    assert json.loads(flags[3]) == {
        "method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4, "prompt_lookup_min": 2,
    }  # fmt: skip
    assert vllm_server_flags(OperatingPoint(concurrency=4, max_num_seqs=8, spec_k=0)) == [
        "--max-num-seqs",
        "8",
    ]


def test_score_subtracts_penalty_and_hw_cost_in_stated_units():
    cfg = TunerSpec(slo_p99_ms=1000, penalty_lambda=4.0, hw_cost=HwCost(per_batch_slot_rps=0.01))
    point = OperatingPoint(concurrency=16, max_num_seqs=128, spec_k=0)
    # p99 1500 ms is 0.5 s over a 1000 ms SLO: 4 × 0.5 = 2 req/s; hw: 0.01 × 128 = 1.28 req/s.
    assert score_value(10.0, p99_ms=1500.0, point=point, cfg=cfg) == pytest.approx(10.0 - 2.0 - 1.28)
    assert score_value(10.0, p99_ms=500.0, point=point, cfg=cfg) == pytest.approx(10.0 - 1.28)


def test_figures_on_a_known_run():
    cfg = TunerSpec(slo_p99_ms=1000, min_samples=10)
    e2el = np.linspace(0.1, 1.2, 100)  # 10 of 100 exceed 1 s (those > 1.0)
    run = RunSample.from_seconds(
        duration_s=50.0, ttft_s=(e2el / 4).tolist(), e2el_s=e2el.tolist(), output_tokens=[8] * 100
    )
    point = OperatingPoint(concurrency=16, max_num_seqs=128, spec_k=0)
    fig = compute_figures([run], point, cfg, seed=0)
    good = int((e2el <= 1.0).sum())
    assert fig.goodput.value == pytest.approx(good / 50.0)
    assert fig.p99.value == pytest.approx(1000 * np.percentile(e2el, 99)) and fig.p99.unit == "ms"
    assert fig.score.value == pytest.approx(good / 50.0 - 10.0 * (np.percentile(e2el, 99) - 1.0))
    assert fig.goodput.ci_low <= fig.goodput.value <= fig.goodput.ci_high
    assert fig.slo_attainment == pytest.approx(good / 100)


def test_too_few_samples_gives_no_figures():
    cfg = TunerSpec(slo_p99_ms=1000, min_samples=32)
    run = RunSample.from_seconds(
        duration_s=5.0, ttft_s=[0.1] * 10, e2el_s=[0.5] * 10, output_tokens=[8] * 10, failed=90
    )
    assert (
        compute_figures([run], OperatingPoint(concurrency=1, max_num_seqs=1, spec_k=0), cfg, seed=0) is None
    )


def test_tpot_slo_metric_excludes_nothing_and_uses_tokens():
    cfg = TunerSpec(slo_p99_ms=100, slo_metric="tpot", min_samples=4)
    run = RunSample.from_seconds(
        duration_s=10.0, ttft_s=[0.1] * 4, e2el_s=[0.5, 0.5, 0.9, 2.1], output_tokens=[5] * 4
    )
    fig = compute_figures([run], OperatingPoint(concurrency=1, max_num_seqs=1, spec_k=0), cfg, seed=0)
    # TPOT = (e2el − ttft)/(5 − 1) = 0.1, 0.1, 0.2, 0.5 s: two meet 100 ms.
    assert fig.goodput.value == pytest.approx(2 / 10.0)
