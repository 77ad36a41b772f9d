"""Serving metrics from raw records, with vLLM `bench serve` definitions."""

from __future__ import annotations

from pydantic import Field

from probes.load.point import SLO
from probes.load.records import RequestRecord
from probes.measurement import Distribution, Model, summarize

DEFINITIONS = {
    "ttft_ms": "time to first token: first streamed chunk with content − send time",
    "tpot_ms": "time per output token, first token excluded: (e2el − ttft) / (output_tokens − 1), "
    "per request with ≥ 2 output tokens, then summarized",
    "itl_ms": "inter-token latency: every gap between consecutive content chunks, pooled over all requests",
    "e2el_ms": "end-to-end latency: last content chunk − send time",
    "request_throughput": "completed requests / window duration",
    "output_throughput": "output tokens (server usage.completion_tokens) of completed requests / window duration",
    "goodput": "completed requests meeting every SLO threshold / window duration (failed requests never good)",
    "slo_attainment": "good requests / measured requests (failed requests count as not good)",
    "window": "steady window: first send to last completion among measured requests "
    "(warm-up and cool-down requests excluded)",
}


class P99Check(Model):
    metric: str
    threshold_ms: float
    p99_ms: float | None
    n: int
    met: bool | None = Field(description="None when nothing completed")


class LoadMetrics(Model):
    measured: int = Field(description="requests in the steady window (completed + failed)")
    completed: int
    failed: int
    errors: dict[str, int] = Field(default_factory=dict, description="failed requests by cause")
    window_start_s: float | None
    window_end_s: float | None
    duration_s: float | None
    total_input_tokens: int
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
    definitions: dict[str, str] = Field(default_factory=lambda: dict(DEFINITIONS))


def _ms(seconds: float) -> float:
    return seconds * 1000.0


def request_latencies(r: RequestRecord) -> dict[str, float]:
    """ttft/tpot/e2el (ms) of one completed request; tpot absent with fewer than 2 output tokens."""
    ttft = r.first_chunk_s - r.sent_s
    e2el = r.end_s - r.sent_s
    out = {"ttft_ms": _ms(ttft), "e2el_ms": _ms(e2el)}
    if r.output_tokens and r.output_tokens > 1:
        out["tpot_ms"] = _ms((e2el - ttft) / (r.output_tokens - 1))
    return out


def is_good(lat: dict[str, float], slo: SLO) -> bool:
    # A threshold on tpot for a one-token reply cannot be checked; vLLM counts tpot as 0 there.
    return all(lat.get(k, 0.0) <= v for k, v in slo.thresholds().items())


def compute_metrics(records: list[RequestRecord], slo: SLO) -> LoadMetrics:
    """Metrics over the given (already window-filtered) records."""
    ok = [r for r in records if r.ok]
    failed = [r for r in records if not r.ok]
    lats = [request_latencies(r) for r in ok]
    itl = [_ms(b - a) for r in ok for a, b in zip(r.chunk_s, r.chunk_s[1:], strict=False)]
    start = min((r.sent_s for r in records), default=None)
    end = max((r.end_s for r in ok if r.end_s is not None), default=None)
    duration = (end - start) if start is not None and end is not None and end > start else None
    out_tokens = sum(r.output_tokens or 0 for r in ok)
    in_tokens = sum(r.prompt_tokens or 0 for r in ok)
    good = sum(1 for lat in lats if is_good(lat, slo))
    errors: dict[str, int] = {}
    for r in failed:
        errors[r.error_kind or "no_content"] = errors.get(r.error_kind or "no_content", 0) + 1

    def rate(x: float) -> float | None:
        return x / duration if duration else None

    dists = {
        k: summarize([lat[k] for lat in lats if k in lat], unit="ms", definition=DEFINITIONS[k])
        for k in ("ttft_ms", "tpot_ms", "e2el_ms")
    }
    return LoadMetrics(
        measured=len(records),
        completed=len(ok),
        failed=len(failed),
        errors=errors,
        window_start_s=start,
        window_end_s=end,
        duration_s=duration,
        total_input_tokens=in_tokens,
        total_output_tokens=out_tokens,
        request_throughput=rate(len(ok)),
        output_throughput=rate(out_tokens),
        total_token_throughput=rate(in_tokens + out_tokens),
        itl_ms=summarize(itl, unit="ms", definition=DEFINITIONS["itl_ms"]),
        slo=slo,
        good=good,
        goodput=rate(good) if slo.thresholds() else None,
        slo_attainment=(good / len(records)) if records and slo.thresholds() else None,
        p99_check=_p99_check(dists, slo),
        **dists,
    )


def _p99_check(dists: dict[str, Distribution], slo: SLO) -> P99Check | None:
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
    )
