"""The tuner and the load probe compute a request's latencies once, the same way (vLLM's definitions)."""

import numpy as np
import pytest

from probes.load.metrics import compute_metrics
from probes.load.point import SLO
from probes.load.records import RequestRecord
from tuner import OperatingPoint, RunSample, TunerSpec, TuningLoad
from tuner.estimates import compute_figures

POINT = OperatingPoint(concurrency=4, max_num_seqs=4, spec_k=0)


def _records() -> list[RequestRecord]:
    """60 completed requests, every fifth a single-token reply (its TPOT is undefined), and 2 failures."""
    rng = np.random.default_rng(7)
    out = []
    for i in range(60):
        sent = 0.05 * i
        ttft = float(rng.uniform(0.02, 0.2))
        tokens = 1 if i % 5 == 0 else int(rng.integers(2, 40))
        # A single-token reply ends with its first token; the others decode at 5–50 ms a token.
        end = sent + ttft + (tokens - 1) * float(rng.uniform(0.005, 0.05))
        chunks = list(np.linspace(sent + ttft, end, tokens))
        out.append(
            RequestRecord(index=i, sent_s=sent, first_chunk_s=sent + ttft, chunk_s=chunks, end_s=end,
                          output_tokens=tokens, output_tokens_source="usage")
        )  # fmt: skip
    out += [RequestRecord(index=60 + j, sent_s=3.0 + j, error_kind="http", error="500") for j in range(2)]
    return out


@pytest.mark.parametrize("metric,threshold", [("tpot_ms", 30.0), ("e2el_ms", 900.0), ("ttft_ms", 150.0)])
def test_tuner_figures_equal_the_load_probes_on_the_same_records(metric, threshold):
    records = _records()
    probe = compute_metrics(records, SLO(**{metric: threshold}, p99_metric=metric))
    run = RunSample.from_records(records, duration_s=probe.duration_s, failed=probe.failed)
    cfg = TunerSpec(
        slo_metric=metric, slo_p99_ms=threshold, min_samples=8, workload=TuningLoad(num_requests=62),
        start=POINT, knobs={"concurrency": [4], "max_num_seqs": [4], "spec_k": [0]},
    )  # fmt: skip
    fig = compute_figures([run], POINT, cfg, seed=0)

    dist = getattr(probe, metric)
    assert fig.p99.value == dist.p(99) and fig.p99.n == dist.n
    assert fig.goodput.value == probe.goodput
    assert fig.slo_attainment == probe.slo_attainment
    assert fig.completed == probe.completed and fig.failed == probe.failed


def test_single_token_replies_are_left_out_of_tpot_and_meet_its_threshold():
    records = _records()
    run = RunSample.from_records(records, duration_s=3.0, failed=2)
    assert sum(v is None for v in run.tpot_ms) == 12  # the 12 single-token replies
    cfg = TunerSpec(
        slo_metric="tpot", slo_p99_ms=1e-3, min_samples=8, workload=TuningLoad(num_requests=62),
        start=POINT, knobs={"concurrency": [4], "max_num_seqs": [4], "spec_k": [0]},
    )  # fmt: skip
    assert cfg.slo_metric == "tpot_ms"  # the older name reads as the unified one
    fig = compute_figures([run], POINT, cfg, seed=0)
    # No multi-token reply meets a 1 µs TPOT; the single-token ones do (vLLM counts their TPOT as 0)
    # but do not pull the p99 towards 0.
    assert fig.goodput.value == pytest.approx(12 / 3.0)
    assert fig.p99.n == 48 and fig.p99.value > 5.0


def test_simulated_and_measured_runs_share_the_definition():
    records = [r for r in _records() if r.ok]
    from_records = RunSample.from_records(records, duration_s=3.0, failed=0)
    from_times = RunSample.from_seconds(
        duration_s=3.0,
        ttft_s=[r.first_chunk_s - r.sent_s for r in records],
        e2el_s=[r.end_s - r.sent_s for r in records],
        output_tokens=[r.output_tokens for r in records],
        sent_s=[r.sent_s for r in records],
    )
    assert from_times == from_records
