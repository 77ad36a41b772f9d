"""Goodput uncertainty when closed-loop clients complete in waves (as on the live CPU target)."""

import numpy as np

from tuner import OperatingPoint, RunSample, TunerSpec, TuningLoad
from tuner.estimates import compute_figures


def _waves(n_waves: int, width: int, period_s: float, rng) -> RunSample:
    """`width` clients start together; each wave completes within 20 ms, every `period_s` seconds."""
    sent, e2el = [], []
    for w in range(n_waves):
        start = w * period_s
        for _ in range(width):
            sent.append(start)
            e2el.append(period_s + rng.uniform(-0.01, 0.01))
    return RunSample.from_seconds(
        duration_s=n_waves * period_s, ttft_s=[0.5] * len(e2el), e2el_s=e2el,
        output_tokens=[64] * len(e2el), sent_s=sent,
    )  # fmt: skip


def test_goodput_se_of_steady_waves_is_small():
    rng = np.random.default_rng(0)
    run = _waves(3, 16, 5.0, rng)  # 48 completions in 15 s, all within a 6 s SLO: 3.2 req/s, no noise
    cfg = TunerSpec(slo_p99_ms=6000, min_samples=32, workload=TuningLoad(num_requests=48),
                      start=OperatingPoint(concurrency=16, max_num_seqs=16, spec_k=0),
                      knobs={"max_num_seqs": [16]})  # fmt: skip
    fig = compute_figures([run], cfg.start, cfg, seed=0)
    assert fig.goodput.value == 48 / 15.0
    # Segments cut inside a wave would see bursts (SE of several req/s); whole waves see a steady rate.
    assert fig.goodput.se < 0.1
    assert fig.goodput.ci_low > 3.0


def test_goodput_ratio_ci_never_goes_below_zero():
    from tuner.estimates import Estimate
    from tuner.findings import goodput_ratio
    from tuner.result import PointFigures

    def pf(g: float, se: float) -> PointFigures:
        est = Estimate(value=g, se=se, ci_low=0, ci_high=g + 2 * se, unit="req/s", definition="d", n=48)
        p99 = Estimate(value=1, se=0, ci_low=1, ci_high=1, unit="s", definition="d", n=48)
        figs = dict(goodput=est, p99=p99, score=est, throughput_rps=g, slo_attainment=1, completed=48,
                    failed=0, runs=1, method="m")  # fmt: skip
        return PointFigures(point=OperatingPoint(concurrency=1, max_num_seqs=1, spec_k=0), source="live",
                            figures=figs)  # fmt: skip

    r = goodput_ratio(pf(1.6, 1.3), pf(3.3, 0.07))
    assert r.value == 3.3 / 1.6 and r.ci_low == 0.0 and r.ci_high > r.value
