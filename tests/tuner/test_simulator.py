"""The simulator against queueing results known in closed form."""

import math

import numpy as np
import pytest

from tuner.knobs import OperatingPoint
from tuner.simulator import SimParams, StepTimeModel, _SpecStream, simulate
from tuner.spec import TuningLoad

STEP = StepTimeModel(
    base_s=0.010, per_seq_s=0.002, per_prefill_token_s=0.0001, per_draft_token_s=0.001, spec_base_s=0.003
)


def _params(**kw) -> SimParams:
    return SimParams(step=STEP, restart_s=30.0, provenance="test", **kw)


def _point(c: int, m: int, k: int = 0) -> OperatingPoint:
    return OperatingPoint(concurrency=c, max_num_seqs=m, spec_k=k)


def test_batch_one_deterministic_server_latency_is_closed_form():
    w = TuningLoad(input_len=100, output_len=20, num_requests=10)
    run = simulate(_params(), _point(1, 1), w)
    prefill = STEP.base_s + STEP.per_seq_s + STEP.per_prefill_token_s * 100
    decode = STEP.base_s + STEP.per_seq_s
    np.testing.assert_allclose(run.ttft_s, prefill)
    np.testing.assert_allclose(run.e2el_s, prefill + 19 * decode)
    assert run.duration_s == pytest.approx(10 * (prefill + 19 * decode))


def test_md1_mean_latency_matches_pollaczek_khinchine():
    w0 = TuningLoad(input_len=50, output_len=10, num_requests=1, mode="open", rate_rps=1.0)
    service = simulate(_params(), _point(1, 1), w0).e2el_s[0]
    rho = 0.6
    w = TuningLoad(input_len=50, output_len=10, num_requests=40000, mode="open", rate_rps=rho / service)
    run = simulate(_params(), _point(10_000, 1), w, seed=3)
    expected = service + rho * service / (2 * (1 - rho))
    assert run.e2el_s.mean() == pytest.approx(expected, rel=0.04)


@pytest.mark.parametrize("clients,batch", [(8, 8), (8, 3), (4, 16)])
def test_closed_loop_obeys_littles_law(clients, batch):
    w = TuningLoad(input_len=64, output_len=32, num_requests=4000)
    run = simulate(_params(step_jitter_cv=0.2), _point(clients, batch), w, seed=1)
    throughput = w.num_requests / run.duration_s
    assert throughput * run.e2el_s.mean() == pytest.approx(clients, rel=0.02)


def test_batch_limit_queues_requests_and_raises_ttft():
    w = TuningLoad(input_len=64, output_len=32, num_requests=400)
    wide = simulate(_params(), _point(8, 8), w)
    narrow = simulate(_params(), _point(8, 2), w)
    assert np.median(narrow.ttft_s) > 3 * np.median(wide.ttft_s)
    # Narrow batches step faster, so per-token time after the first token is lower.
    tpot = lambda r: np.median((r.e2el_s - r.ttft_s) / 31)  # noqa: E731
    assert tpot(narrow) < tpot(wide)


def test_full_acceptance_speculation_cuts_decode_steps_by_k_plus_one():
    w = TuningLoad(input_len=10, output_len=41, num_requests=3)
    run = simulate(_params(acceptance_rate=1.0), _point(1, 1, k=3), w)
    prefill = STEP.duration(1, 10, 3)
    decode = STEP.duration(1, 0, 3)
    np.testing.assert_allclose(run.e2el_s, prefill + math.ceil(40 / 4) * decode)


def test_spec_stream_mean_tokens_per_step_is_geometric_sum():
    alpha, k = 0.6, 4
    stream = _SpecStream(k, alpha, np.random.default_rng(0), 1000)
    tokens = 500
    steps = np.array([stream.steps_for(tokens) for _ in range(400)])
    expected_per_step = sum(alpha**j for j in range(k + 1))
    assert tokens / steps.mean() == pytest.approx(expected_per_step, rel=0.02)


def test_same_seed_same_run_and_different_seed_differs():
    w = TuningLoad(input_len=32, output_len=16, num_requests=200, mode="open", rate_rps=5.0)
    a = simulate(_params(step_jitter_cv=0.1), _point(4, 4), w, seed=5)
    b = simulate(_params(step_jitter_cv=0.1), _point(4, 4), w, seed=5)
    c = simulate(_params(step_jitter_cv=0.1), _point(4, 4), w, seed=6)
    np.testing.assert_array_equal(a.e2el_s, b.e2el_s)
    assert not np.array_equal(a.e2el_s, c.e2el_s)


def test_client_limit_holds_requests_back_from_the_server():
    w = TuningLoad(input_len=32, output_len=16, num_requests=300, mode="open", rate_rps=1000.0)
    run = simulate(_params(), _point(2, 64), w)
    # Latency is measured from sending, and at most 2 are in flight: TTFT never sees a queue of 300.
    assert run.ttft_s.max() < 2 * STEP.duration(2, 64, 0)


@pytest.mark.parametrize("burstiness", [0.5, 1.0, math.inf])
def test_open_loop_sends_on_the_load_probes_own_schedule(burstiness):
    from probes.load.arrivals import arrival_offsets

    w = TuningLoad(
        input_len=16, output_len=4, num_requests=50, mode="open", rate_rps=2.0, burstiness=burstiness
    )
    run = simulate(_params(), _point(64, 64), w, seed=11)  # far from saturated: sent on arrival
    expected = arrival_offsets(50, 2.0, burstiness, seed=11)
    assert expected[0] == 0.0  # the first request is sent at the run's start, not one gap late
    np.testing.assert_allclose(run.sent_s, expected, rtol=0, atol=1e-12)
