"""Serving metrics from raw records, with vLLM `bench serve` definitions."""

from __future__ import annotations

from pydantic import Field

from probes.core.measurement import DEFAULT_PERCENTILES, MS_PER_S, Bounded, Distribution, Model, summarize
from probes.load.point import SLO
from probes.load.records import OUTCOME_RULE, TOKEN_SOURCE_RULE, RequestRecord
from probes.load.stats import (
    ProportionCI,
    QuantileCI,
    SampleSufficiency,
    proportion_ci,
    quantile_ci,
    sample_sufficiency,
)

LATENCY_METRICS = ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms")
LATENCY_LABELS = {
    "ttft_ms": "TTFT",
    "tpot_ms": "TPOT",
    "itl_ms": "ITL",
    "e2el_ms": "E2EL",
}  # as documents show them
CLAIM_CONFIDENCE = 0.99  # MLPerf's confidence for a tail-latency claim
CI_CONFIDENCE = 0.95

DEFINITIONS = {
    "ttft_ms": "time to first token: first streamed chunk with content − send time",
    "tpot_ms": "time per output token, first token excluded: (e2el − ttft) / (output_tokens − 1), "
    "per request with ≥ 2 output tokens, then summarized",
    "itl_ms": "inter-token latency: every gap between consecutive content chunks, pooled over all requests",
    "e2el_ms": "end-to-end latency: last content chunk − send time",
    "request_throughput": "completed requests / window duration",
    "output_throughput": "output tokens of completed requests / window duration; "
    f"{TOKEN_SOURCE_RULE} (output_tokens_sources counts them)",
    "outcome": OUTCOME_RULE,
    "total_input_tokens": "prompt tokens of completed requests by the server's usage.prompt_tokens, else the "
    "workload's tokenizer over the prompt sent (completions endpoint; each record names its source); None "
    "when some completed request's count is missing (never 0 stated as a figure)",
    "goodput": "completed requests meeting every SLO threshold / window duration (failed and truncated "
    "requests never good)",
    "slo_attainment": "good requests / measured requests (failed and truncated requests count as not good)",
    "window": "steady window: first send to last completion among measured requests "
    "(warm-up and cool-down requests excluded); pooled repetitions: sum of their windows",
    "sample_sufficiency": "per p99 figure: samples n, samples required by MLPerf early stopping at 99 % "
    "confidence (given the violations of its SLO threshold, if any), sufficient yes/no",
    "percentile_ci": "95 % order-statistic confidence intervals of p50 and p99 per latency metric",
    "goodput_ci": "95 % Clopper–Pearson interval of SLO attainment, scaled by measured requests / window",
}


class GoodputCI(Bounded, Model):
    """Goodput's interval: attainment's exact binomial interval × measured requests / window."""

    attainment: ProportionCI
    lower: float | None = Field(description="req/s")
    upper: float | None = Field(description="req/s")
    method: str = (
        "Clopper–Pearson interval of good/measured, times measured/window (conditional on the number of "
        "requests measured and the window length)"
    )


class P99Check(Model):
    metric: str
    threshold_ms: float
    p99_ms: float | None
    n: int
    met: bool | None = Field(description="None when nothing completed")
    sufficiency: SampleSufficiency | None = Field(
        None, description="whether n supports the claim at 99 % confidence (MLPerf early stopping)"
    )


class LoadMetrics(Model):
    measured: int = Field(description="requests in the steady window (completed + truncated + failed)")
    completed: int
    truncated: int = Field(
        0,
        description="replies that ended short of what was asked (OUTCOME_RULE), excluded from every latency, "
        "throughput and goodput figure (an older document counted them completed)",
    )
    failed: int
    errors: dict[str, int] = Field(default_factory=dict, description="failed requests by cause")
    finish_reasons: dict[str, int] = Field(
        default_factory=dict,
        description="answered requests (completed or truncated) by the finish_reason the server sent, 'none' "
        "where no chunk carried one",
    )
    output_tokens_sources: dict[str, int] = Field(
        default_factory=dict,
        description="completed requests by where their output tokens were counted from (TOKEN_SOURCE_RULE)",
    )
    window_start_s: float | None
    window_end_s: float | None
    duration_s: float | None
    total_input_tokens: int | None = Field(
        description="prompt tokens of completed requests (server usage); None: not counted by the server "
        "for every one (before, 0 was stated)"
    )
    total_output_tokens: int
    request_throughput: float | None = Field(description="req/s")
    output_throughput: float | None = Field(description="output tokens/s")
    total_token_throughput: float | None = Field(description="(input + output) tokens/s")
    ttft_ms: Distribution
    tpot_ms: Distribution
    itl_ms: Distribution
    e2el_ms: Distribution
    slo: SLO
    good: int
    goodput: float | None = Field(description="req/s meeting every SLO threshold")
    slo_attainment: float | None
    p99_check: P99Check | None = None
    sample_sufficiency: dict[str, SampleSufficiency] = Field(
        default_factory=dict, description="per latency metric: is its p99 backed by enough samples"
    )
    insufficient_samples: list[str] = Field(
        default_factory=list, description="latency metrics whose p99 rests on too few samples"
    )
    percentile_ci: dict[str, QuantileCI] = Field(
        default_factory=dict, description="keys '<metric>.p50', '<metric>.p99'"
    )
    goodput_ci: GoodputCI | None = None
    repetitions: int = Field(1, ge=1, description="runs whose raw records were pooled")
    definitions: dict[str, str] = Field(default_factory=lambda: dict(DEFINITIONS))


def _ms(seconds: float) -> float:
    return seconds * MS_PER_S


def latencies_ms(ttft_s: float, e2el_s: float, output_tokens: int | None) -> dict[str, float]:
    """ttft/tpot/e2el (ms) of one completed request from its times since sending (vLLM's definitions).

    The one place a request's latencies are computed: the load probe, the tuner's live runs and the
    simulator all come through here. tpot is absent with fewer than 2 output tokens, as vLLM's bench
    leaves such requests out of TPOT (and counts them as meeting a TPOT threshold, see `is_good`)."""
    out = {"ttft_ms": _ms(ttft_s), "e2el_ms": _ms(e2el_s)}
    if output_tokens and output_tokens > 1:
        out["tpot_ms"] = _ms((e2el_s - ttft_s) / (output_tokens - 1))
    return out


def request_latencies(r: RequestRecord) -> dict[str, float]:
    """ttft/tpot/e2el (ms) of one completed request record (see `latencies_ms`)."""
    return latencies_ms(r.first_chunk_s - r.sent_s, r.end_s - r.sent_s, r.output_tokens)


def latency_samples(records: list[RequestRecord]) -> dict[str, list[float]]:
    """Per latency metric, the samples its distribution is summarized from (completed requests only)."""
    ok = [r for r in records if r.ok]
    lats = [request_latencies(r) for r in ok]
    samples = {k: [lat[k] for lat in lats if k in lat] for k in ("ttft_ms", "tpot_ms", "e2el_ms")}
    samples["itl_ms"] = [_ms(b - a) for r in ok for a, b in zip(r.chunk_s, r.chunk_s[1:], strict=False)]
    return samples


def is_good(lat: dict[str, float], slo: SLO) -> bool:
    # A threshold on tpot for a one-token reply cannot be checked; vLLM counts tpot as 0 there.
    return all(lat.get(k, 0.0) <= v for k, v in slo.thresholds().items())


def compute_metrics(
    records: list[RequestRecord],
    slo: SLO,
    *,
    percentiles: tuple[float, ...] = DEFAULT_PERCENTILES,
) -> LoadMetrics:
    """Metrics over the given (already window-filtered) records."""
    return pool_metrics([records], slo, percentiles=percentiles)


def pool_metrics(
    runs: list[list[RequestRecord]],
    slo: SLO,
    *,
    percentiles: tuple[float, ...] = DEFAULT_PERCENTILES,
) -> LoadMetrics:
    """Metrics over repetitions of one point, combined honestly: raw records are pooled (never
    percentiles averaged) and rates divide pooled counts by the sum of the runs' windows."""
    percentiles = tuple(sorted(set(percentiles) | {50.0, 99.0}))
    records = [r for run in runs for r in run]
    ok = [r for r in records if r.ok]
    lats = [request_latencies(r) for r in ok]
    samples = latency_samples(ok)
    windows = [_window(run) for run in runs]
    spans = [w[1] - w[0] for w in windows if w is not None and w[1] > w[0]]
    duration = sum(spans) if spans else None
    start, end = windows[0] if len(runs) == 1 and windows[0] else (None, None)
    out_tokens = sum(r.output_tokens or 0 for r in ok)
    counted = [r.prompt_tokens for r in ok if r.prompt_tokens is not None]
    judged = any(r.outcome is not None for r in records)  # an older file states no outcome: 0 for none
    # A count missing for some completed request is no figure: 0 is never stated for "not counted".
    in_tokens = sum(counted) if not judged or (ok and len(counted) == len(ok)) else None
    truncated = sum(1 for r in records if r.truncated)
    answered = [r for r in records if r.answered]
    good = sum(1 for lat in lats if is_good(lat, slo))
    thresholds = slo.thresholds()

    def rate(x: float) -> float | None:
        return x / duration if duration else None

    dists = {
        k: summarize(samples[k], unit="ms", definition=DEFINITIONS[k], percentiles=percentiles)
        for k in LATENCY_METRICS
    }
    sufficiency = {
        k: sample_sufficiency(
            samples[k],
            threshold=thresholds.get(k),
            confidence=CLAIM_CONFIDENCE,
            interval_confidence=CI_CONFIDENCE,  # the interval the page shows decides a fail
        )
        for k in LATENCY_METRICS
    }
    return LoadMetrics(
        measured=len(records),
        completed=len(ok),
        truncated=truncated,
        failed=len(records) - len(ok) - truncated,
        errors=_error_counts(records),
        **_judged_counts(answered, ok),
        window_start_s=start,
        window_end_s=end,
        duration_s=duration,
        total_input_tokens=in_tokens,
        total_output_tokens=out_tokens,
        request_throughput=rate(len(ok)),
        output_throughput=rate(out_tokens),
        total_token_throughput=rate(in_tokens + out_tokens) if in_tokens is not None else None,
        slo=slo,
        good=good,
        goodput=rate(good) if thresholds else None,
        slo_attainment=(good / len(records)) if records and thresholds else None,
        p99_check=_p99_check(dists, sufficiency, slo),
        sample_sufficiency=sufficiency,
        insufficient_samples=[k for k, v in sufficiency.items() if not v.sufficient],
        percentile_ci={
            f"{k}.p{q:g}": quantile_ci(samples[k], q, CI_CONFIDENCE)
            for k in LATENCY_METRICS
            for q in (50, 99)
        },
        goodput_ci=_goodput_ci(good, len(records), duration) if thresholds else None,
        repetitions=len(runs),
        **dists,
    )


def _window(records: list[RequestRecord]) -> tuple[float, float] | None:
    start = min((r.sent_s for r in records), default=None)
    end = max((r.end_s for r in records if r.ok and r.end_s is not None), default=None)
    return None if start is None or end is None else (start, end)


def _judged_counts(answered: list[RequestRecord], ok: list[RequestRecord]) -> dict[str, dict[str, int]]:
    """finish_reasons and output_tokens_sources; empty for older records (no outcome stated), so
    an older document's metrics recompute as it stated them."""
    if not any(r.outcome is not None for r in answered):
        return {}
    reasons: dict[str, int] = {}
    for r in answered:
        reasons[r.finish_reason or "none"] = reasons.get(r.finish_reason or "none", 0) + 1
    sources: dict[str, int] = {}
    for r in ok:
        key = r.output_tokens_source or "none"
        sources[key] = sources.get(key, 0) + 1
    return {"finish_reasons": reasons, "output_tokens_sources": sources}


def _error_counts(records: list[RequestRecord]) -> dict[str, int]:
    errors: dict[str, int] = {}
    for r in records:
        if not r.answered:
            kind = r.error_kind or "no_content"
            errors[kind] = errors.get(kind, 0) + 1
    return errors


def _goodput_ci(good: int, measured: int, duration: float | None) -> GoodputCI | None:
    if measured == 0:
        return None
    att = proportion_ci(good, measured, CI_CONFIDENCE)
    scale = measured / duration if duration else None
    return GoodputCI(
        attainment=att,
        lower=att.lower * scale if scale is not None and att.lower is not None else None,
        upper=att.upper * scale if scale is not None and att.upper is not None else None,
    )


def _p99_check(
    dists: dict[str, Distribution], sufficiency: dict[str, SampleSufficiency], slo: SLO
) -> P99Check | None:
    threshold = slo.thresholds().get(slo.p99_metric)
    if threshold is None:
        return None
    d = dists[slo.p99_metric]
    p99 = d.p(99)
    return P99Check(
        metric=slo.p99_metric,
        threshold_ms=threshold,
        p99_ms=p99,
        n=d.n,
        met=None if p99 is None else p99 <= threshold,
        sufficiency=sufficiency[slo.p99_metric],
    )
