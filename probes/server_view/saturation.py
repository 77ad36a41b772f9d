"""Over-saturation: a load point whose waiting queue, or TTFT, grows without bound over the run.

Below capacity a server's queue and its TTFT fluctuate around a level; above it, requests arrive faster than
they finish, so the queue (and the time a request waits for its first token) grows for as long as the load
lasts, and every figure of the point depends on how long it ran. The test, on each series of (time, value):

- **Mann–Kendall**: Kendall's τ-b between time and value (scipy.stats.kendalltau, ties corrected), one-sided
  p-value for an increasing trend < ALPHA (0.01);
- **Theil–Sen**: the median of pairwise slopes (scipy.stats.theilslopes) with its 95 % interval; the
  interval's lower end > 0 (a few early steps, such as the queue filling at the start, do not move the median
  slope, so a level that is reached and held is no trend);
- **growth that matters**: slope × the series' span ≥ MIN_QUEUE_GROWTH (2 requests) for the waiting queue,
  ≥ MIN_TTFT_GROWTH (0.5) × the series' median for TTFT;
- at least MIN_POINTS (8) values.

All four hold: the series grows. The point is over-saturated when either series grows:
- **waiting**: `vllm:num_requests_waiting` (summed over its label sets) at each scrape from the first send to
  the first scrape at or after the last send (the queue drains once sending stops, which is no sign of health;
  a point stopped on saturation ends with the page that stopped it);
- **TTFT**: each completed request's client TTFT against its send time.

A closed loop cannot grow its queue without bound (at most `concurrency` requests exist), so it is flagged
only when its TTFT still trends up by the stated amount. With `stop_when_saturated`, the waiting-queue test
runs after every scrape (from MIN_POINTS on) and a point that fails it stops sending; the TTFT test needs the
completed requests and runs at the end. Repeated interim testing raises the chance of a false stop; the
growth threshold and the Theil–Sen interval keep a flat or noisy queue from passing (tests/server_view).
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from probes.core.measurement import Model

ALPHA = 0.01
SLOPE_CONFIDENCE = 0.95
MIN_POINTS = 8
MIN_QUEUE_GROWTH = 2.0  # requests
MIN_TTFT_GROWTH = 0.5  # × the series' median TTFT
RULE = (
    f"a series grows when Mann–Kendall (Kendall's τ-b vs time) gives one-sided p < {ALPHA:g}, the lower end of "
    f"the Theil–Sen slope's {SLOPE_CONFIDENCE * 100:g} % interval is > 0, slope × span ≥ {MIN_QUEUE_GROWTH:g} "
    f"requests (waiting queue) or ≥ {MIN_TTFT_GROWTH:g} × the median (TTFT), with ≥ {MIN_POINTS} values; "
    "over-saturated when the scraped waiting queue (between first and last send) or the client TTFT (vs send "
    "time) grows"
)
WAITING_SERIES = "vllm:num_requests_waiting at each scrape from the first send to the first scrape at or after the last send"
TTFT_SERIES = "client TTFT of each completed request against its send time"


class TrendTest(Model):
    """One series' trend test (see the module's rule)."""

    series: str
    unit: str = Field(description="of the values; slopes are in this unit per second")
    n: int = Field(ge=0, description="values tested")
    span_s: float | None = Field(description="time from the first to the last value")
    kendall_tau: float | None
    p_value: float | None = Field(description="Mann–Kendall, one-sided (increasing)")
    slope_per_s: float | None = Field(description="Theil–Sen slope")
    slope_ci: tuple[float, float] | None = Field(description="95 % interval of the Theil–Sen slope")
    growth: float | None = Field(description="slope × span, in the values' unit")
    min_growth: float = Field(description="the growth that counts as unbounded, in the values' unit")
    grows: bool
    reason: str | None = Field(None, description="why the series was not tested (too few values)")


class Saturation(Model):
    over_saturated: bool
    tests: list[TrendTest] = Field(description="the waiting-queue test (when scraped) and the TTFT test")
    stop_when_saturated: bool = Field(False, description="whether the point was to stop once saturated")
    interval_s: float | None = Field(
        None, description="seconds between the /metrics scrapes the waiting queue was sampled at (None: none)"
    )
    rule: str = RULE


def trend_test(
    times: list[float], values: list[float], *, series: str, unit: str, min_growth: float
) -> TrendTest:
    """The module's test on one series (times in s)."""
    # deferred: importing scipy.stats costs every command ~0.7 s of CPU at its start
    from scipy.stats import kendalltau, theilslopes

    n = len(values)
    span = (max(times) - min(times)) if n else None
    base = {"series": series, "unit": unit, "n": n, "span_s": span, "min_growth": min_growth}
    empty = {"kendall_tau": None, "p_value": None, "slope_per_s": None, "slope_ci": None, "growth": None}
    if n < MIN_POINTS or not span:
        return TrendTest(**base, **empty, grows=False, reason=f"{n} values: fewer than {MIN_POINTS}")
    if len(set(values)) == 1:
        return TrendTest(**base, **empty | {"slope_per_s": 0.0, "growth": 0.0}, grows=False)
    tau, p = kendalltau(times, values, alternative="greater")
    slope, _, low, high = theilslopes(values, times, alpha=SLOPE_CONFIDENCE)
    tau, p = _finite(tau), _finite(p)
    growth = float(slope) * span
    grows = p is not None and p < ALPHA and low > 0 and growth >= min_growth
    return TrendTest(
        **base,
        kendall_tau=tau,
        p_value=p,
        slope_per_s=float(slope),
        slope_ci=(float(low), float(high)),
        growth=growth,
        grows=bool(grows),
    )


def _finite(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def waiting_trend(times: list[float], waiting: list[float]) -> TrendTest:
    return trend_test(times, waiting, series=WAITING_SERIES, unit="requests", min_growth=MIN_QUEUE_GROWTH)


def ttft_trend(send_times: list[float], ttft_ms: list[float]) -> TrendTest:
    median = float(np.median(ttft_ms)) if ttft_ms else 0.0
    return trend_test(send_times, ttft_ms, series=TTFT_SERIES, unit="ms", min_growth=MIN_TTFT_GROWTH * median)


def saturation(
    waiting: TrendTest | None,
    ttft: TrendTest,
    stop_when_saturated: bool = False,
    interval_s: float | None = None,
) -> Saturation:
    tests = [t for t in (waiting, ttft) if t is not None]
    return Saturation(
        over_saturated=any(t.grows for t in tests),
        tests=tests,
        stop_when_saturated=stop_when_saturated,
        interval_s=interval_s,
    )
