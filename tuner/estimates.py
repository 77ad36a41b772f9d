"""Goodput, p99 and score of an evaluation, with bootstrap uncertainty over requests."""

from __future__ import annotations

import warnings

import numpy as np
from pydantic import Field

from probes.core.measurement import MS_PER_S, Model
from tuner.evaluation import RunSample
from tuner.knobs import OperatingPoint
from tuner.spec import TunerSpec

BOOTSTRAP_METHOD = (
    "bootstrap over requests within each run ({b} resamples); SE is the largest of the bootstrap SE, "
    "with ≥2 runs the SE of the per-run values, and for goodput and score the batch-means SE of goodput "
    "over consecutive segments of ≥{seg} completions; 95 % CI = bootstrap 2.5/97.5 percentiles, widened "
    "to ± 1.96 SE when another SE is larger"
)


class Estimate(Model):
    value: float
    se: float = Field(ge=0, description="standard error")
    ci_low: float
    ci_high: float
    unit: str
    definition: str
    n: int = Field(ge=0, description="completed requests the figure rests on")


class Figures(Model):
    goodput: Estimate
    p99: Estimate
    score: Estimate
    throughput_rps: float = Field(description="completed requests per second of run time")
    slo_attainment: float = Field(description="fraction of sent requests meeting the SLO")
    completed: int
    failed: int
    runs: int
    method: str


def slo_values_ms(run: RunSample, metric: str) -> np.ndarray:
    """Per-request values of the SLO metric (ms), from the run's latencies (the probe's definitions);
    NaN where the metric is undefined (TPOT of a single-token response)."""
    return run.values(metric)


def good_mask(values: np.ndarray, slo_ms: float) -> np.ndarray:
    """Requests meeting the SLO: not above the threshold. An undefined TPOT (NaN) meets it, as in the
    load probe's goodput and vLLM's (which counts a single-token response's TPOT as 0)."""
    return ~(values > slo_ms)


def p99_of(values: np.ndarray, axis: int | None = None):
    """p99 over the requests where the metric is defined (vLLM leaves single-token TPOT out)."""
    if np.isnan(values).any():
        return np.nanpercentile(values, 99, axis=axis, method="linear")
    return np.percentile(values, 99, axis=axis, method="linear")


def score_value(goodput_rps: float, *, p99_ms: float, point: OperatingPoint, cfg: TunerSpec) -> float:
    # Keyword-only: p99 was in seconds here once; a positional call from that time fails loudly.
    """S(K) = goodput − λ·max(0, p99 − SLO) − hw_cost, in req/s (p99 and SLO in ms, λ per second)."""
    excess_s = max(0.0, p99_ms - cfg.slo_p99_ms) / MS_PER_S
    return goodput_rps - cfg.penalty_lambda * excess_s - cfg.hw_cost.of(point)


def compute_figures(
    runs: list[RunSample], point: OperatingPoint, cfg: TunerSpec, *, seed: int
) -> Figures | None:
    """Figures of the pooled runs, or None when fewer than `cfg.min_samples` requests completed (or
    none has the SLO metric defined)."""
    values = [slo_values_ms(r, cfg.slo_metric) for r in runs]
    completed = sum(v.size for v in values)
    defined = sum(int((~np.isnan(v)).sum()) for v in values)
    if completed < cfg.min_samples or completed == 0 or defined == 0:
        return None
    boot = _bootstrap(values, runs, point, cfg, seed)
    point_est = _point_estimates(values, runs, point, cfg)
    per_run = _per_run(values, runs, point, cfg) if len(runs) >= 2 else None
    metric = cfg.slo_metric
    slo_ms = cfg.slo_p99_ms
    defs = {
        "goodput": ("req/s", f"completed requests with {metric} ≤ {slo_ms:g} ms per second of run time"),
        "p99": ("ms", f"99th percentile of per-request {metric} over completed requests"),
        "score": ("req/s", "S(K) = goodput − λ·max(0, p99 − SLO) − hw_cost(K)"),
    }
    seg_se = segment_goodput_se(runs, values, slo_ms, cfg.min_samples, point.concurrency)
    estimates = {
        name: _estimate(
            point_est[i],
            boot[:, i],
            None if per_run is None else per_run[:, i],
            0.0 if name == "p99" else seg_se,
            *defs[name],
            defined if name == "p99" else completed,
            nonnegative=name != "score",
        )
        for i, name in enumerate(("goodput", "p99", "score"))
    }
    failed = sum(r.failed for r in runs)
    duration = sum(r.duration_s for r in runs)
    good = sum(int(good_mask(v, slo_ms).sum()) for v in values)
    return Figures(
        **estimates,
        throughput_rps=completed / duration,
        slo_attainment=good / (completed + failed),
        completed=completed,
        failed=failed,
        runs=len(runs),
        method=BOOTSTRAP_METHOD.format(
            b=cfg.bootstrap_resamples, seg=_segment_size(cfg.min_samples, point.concurrency)
        ),
    )


def _triple(values: list[np.ndarray], durations: list[float], point, cfg) -> tuple[float, float, float]:
    pooled = np.concatenate(values)
    goodput = float(sum(int(good_mask(v, cfg.slo_p99_ms).sum()) for v in values) / sum(durations))
    p99 = float(p99_of(pooled))
    return goodput, p99, score_value(goodput, p99_ms=p99, point=point, cfg=cfg)


def _point_estimates(values, runs, point, cfg) -> tuple[float, float, float]:
    return _triple(values, [r.duration_s for r in runs], point, cfg)


def _per_run(values, runs, point, cfg) -> np.ndarray:
    return np.array(
        [
            _triple([v], [r.duration_s], point, cfg)
            for v, r in zip(values, runs, strict=True)
            if (~np.isnan(v)).any()
        ]
    )


def _bootstrap(values, runs, point, cfg, seed: int) -> np.ndarray:
    """(B, 3) bootstrap replicates of (goodput, p99, score), resampling requests within each run."""
    rng = np.random.default_rng(seed)
    b = cfg.bootstrap_resamples
    slo_ms = cfg.slo_p99_ms
    samples = [v[rng.integers(0, v.size, size=(b, v.size))] for v in values if v.size]
    pooled = np.concatenate(samples, axis=1)
    goodput = good_mask(pooled, slo_ms).sum(axis=1) / sum(r.duration_s for r in runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample may hold only one-token replies
        p99 = p99_of(pooled, axis=1)
    keep = ~np.isnan(p99)
    goodput, p99 = goodput[keep], p99[keep]
    penalty = cfg.penalty_lambda * np.maximum(0.0, p99 - slo_ms) / MS_PER_S
    score = goodput - penalty - cfg.hw_cost.of(point)
    return np.column_stack([goodput, p99, score])


def _segment_size(min_samples: int, concurrency: int = 1) -> int:
    # Segments need enough completions for a rate: a quarter of min_samples, at least 8, and at least
    # one turnover of the clients. Closed-loop clients that start together complete in waves; a segment
    # cut inside a wave spans almost no time and its "rate" is a burst (measured live: goodput SE 3.5
    # req/s at 1.3 req/s with 8-completion segments at concurrency 16).
    return max(8, min_samples // 4, concurrency)


def segment_goodput_se(
    runs: list[RunSample], values: list[np.ndarray], slo_ms: float, min_samples: int, concurrency: int = 1
) -> float:
    """Batch-means SE of goodput: rate of good completions over consecutive segments of completions.

    Bootstrapping requests cannot see how the run's duration varies; the spread of the rate across
    segments can. Runs without send times contribute nothing (0.0).
    """
    seg = _segment_size(min_samples, concurrency)
    rates = []
    for run, v in zip(runs, values, strict=True):
        if run.sent_s is None or v.size < 2 * seg:
            continue
        done = np.asarray(run.sent_s) + np.asarray(run.e2el_ms) / MS_PER_S
        order = np.argsort(done, kind="stable")
        good = good_mask(v[order], slo_ms).astype(float)
        t = done[order]
        edges = np.arange(0, v.size + 1, seg)
        for a, b in zip(edges[:-1], edges[1:], strict=False):
            span = t[b - 1] - (t[a - 1] if a else 0.0)
            if span > 0:
                rates.append(good[a:b].sum() / span)
    if len(rates) < 2:
        return 0.0
    return float(np.std(rates, ddof=1) / np.sqrt(len(rates)))


def _estimate(value, boot, per_run, seg_se, unit, definition, n, *, nonnegative: bool) -> Estimate:
    se = float(boot.std(ddof=1))
    lo, hi = (float(x) for x in np.percentile(boot, [2.5, 97.5]))
    others = [seg_se]
    if per_run is not None and per_run.size >= 2:
        others.append(float(per_run.std(ddof=1) / np.sqrt(per_run.size)))
    if max(others) > se:
        se = max(others)
        lo, hi = min(lo, value - 1.96 * se), max(hi, value + 1.96 * se)
    if nonnegative:
        lo = max(lo, 0.0)
    return Estimate(value=value, se=se, ci_low=lo, ci_high=hi, unit=unit, definition=definition, n=n)
