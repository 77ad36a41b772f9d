"""The tuner's evaluator on the mock server's serving model (tuner/serving_mock.py): max_num_seqs is the
mock's, restarted when it changes; speculation is refused with its reason; the figures follow the stated law."""

import statistics

import pytest

from probes.targets.serving_model import ServingModelConfig
from tuner.knobs import OperatingPoint
from tuner.serving_mock import ServingMockEvaluator
from tuner.spec import TuningLoad

# A step of B sequences: 10 + 5·B ms; prefill free. 8 output tokens: 1 admission step + 7 decode steps.
LAW = ServingModelConfig(max_num_seqs=64, base_ms=10, per_seq_ms=5, per_prefill_token_ms=0)
LOAD = TuningLoad(mode="closed", input_len=4, output_len=8, num_requests=8)


@pytest.mark.system
def test_max_num_seqs_is_the_mocks_and_a_restart_knob():
    with ServingMockEvaluator(LAW) as ev:
        wide = ev.evaluate(OperatingPoint(concurrency=4, max_num_seqs=4, spec_k=0), LOAD, repeats=1, seed=0)
        same = ev.evaluate(OperatingPoint(concurrency=4, max_num_seqs=4, spec_k=0), LOAD, repeats=1, seed=1)
        narrow = ev.evaluate(OperatingPoint(concurrency=4, max_num_seqs=2, spec_k=0), LOAD, repeats=1, seed=2)
        spec = ev.evaluate(OperatingPoint(concurrency=4, max_num_seqs=2, spec_k=2), LOAD, repeats=1, seed=3)
    assert wide.restart_s > 0 and same.restart_s == 0 and narrow.restart_s > 0
    # 4 users decode in a batch of 4 (30 ms steps); with max_num_seqs 2, in batches of 2 (20 ms steps), and
    # half of them wait for a slot: most of a 7-step service time more before their first token
    assert statistics.median(wide.runs[0].tpot_ms) == pytest.approx(LAW.step_ms(4, 0), rel=0.15)
    assert statistics.median(narrow.runs[0].tpot_ms) == pytest.approx(LAW.step_ms(2, 0), rel=0.15)
    waits = sorted(narrow.runs[0].ttft_ms)
    assert waits[-1] > waits[0] + 5 * LAW.step_ms(2, 0)
    assert spec.unsupported is not None and spec.unsupported.knob == "spec_k"
    assert "no speculative decoding" in spec.unsupported.reason


@pytest.mark.system
def test_the_campaign_measurer_sets_the_laws_batch_limits_from_the_configuration():
    """tuner.serving_mock:mock_measurer (the predictor's campaign on the serving model): max_num_seqs of the
    configuration's engine arguments is the law's; a sampling option changes nothing the law states."""
    from tuner.serving_mock import ServingMockMeasurer

    measurer = ServingMockMeasurer(LAW, users=4, requests=8, input_len=4, output_len=8)
    try:
        wide = measurer.measure({"engine": {"max_num_seqs": 4}, "request": {"temperature": 1.2}}, seed=0)
        narrow = measurer.measure({"engine": {"max_num_seqs": 2}}, seed=1)
    finally:
        measurer.close()
    # a batch of 4: 30 ms steps; of 2: 20 ms steps (TPOT p50 follows the law)
    assert wide["tpot_p50_ms"] == pytest.approx(LAW.step_ms(4, 0), rel=0.15)
    assert narrow["tpot_p50_ms"] == pytest.approx(LAW.step_ms(2, 0), rel=0.15)
    assert wide["n_requests"] == narrow["n_requests"] == 8
    assert narrow["latency"]["source"].startswith("the mock server's serving model")
