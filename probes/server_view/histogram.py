"""Quantiles of a Prometheus histogram over a window, estimated from its buckets.

The server exports cumulative bucket counts (`_bucket{le=...}`), not samples. Over a window the increase of
each bucket counts the requests that finished in it with a value ≤ its bound. The q-quantile is estimated the
way Prometheus's `histogram_quantile` does: find the first bucket whose cumulative increase reaches q × total,
and interpolate linearly between its lower and upper bound (the values are assumed spread evenly inside a
bucket; the lowest bucket's lower bound is 0). The true quantile lies in that bucket whatever the spread, so
the bucket's bounds are stated beside the estimate as its resolution. A quantile in the +Inf bucket has no
upper bound and no estimate: only "above the largest finite bound".
"""

from __future__ import annotations

import math

from pydantic import Field

from probes.core.measurement import MS_PER_S, Model, percentile_key

METHOD = (
    "Prometheus histogram_quantile: linear interpolation inside the bucket holding rank q × count, over the "
    "increase of the cumulative buckets across the run (first to last scrape); lowest bucket from 0"
)


class BucketQuantile(Model):
    estimate_ms: float | None = Field(
        description="interpolated estimate; None when it falls in the +Inf bucket"
    )
    bucket_lower_ms: float = Field(description="the true quantile is > this bound (resolution)")
    bucket_upper_ms: float | None = Field(description="and ≤ this one; None: the +Inf bucket")


class HistogramQuantiles(Model):
    """A latency histogram's quantiles over the run, as the server measured it."""

    unit: str = "ms"
    definition: str
    n: int = Field(ge=0, description="requests the histogram counted during the run (increase of _count)")
    quantiles: dict[str, BucketQuantile] = Field(default_factory=dict, description="keys 'p50', 'p90', 'p99'")
    method: str = METHOD


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> BucketQuantile | None:
    """The q-quantile (0 < q < 1) from (upper bound in s, cumulative count) pairs, sorted by bound, the last
    one +Inf; None when the histogram counted nothing."""
    total = buckets[-1][1] if buckets else 0.0
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, cumulative in buckets:
        if cumulative >= rank and cumulative > below:
            if math.isinf(bound):
                return BucketQuantile(
                    estimate_ms=None, bucket_lower_ms=lower * MS_PER_S, bucket_upper_ms=None
                )
            value = lower + (bound - lower) * (rank - below) / (cumulative - below)
            return BucketQuantile(
                estimate_ms=value * MS_PER_S,
                bucket_lower_ms=lower * MS_PER_S,
                bucket_upper_ms=bound * MS_PER_S,
            )
        lower, below = bound, cumulative
    return None


def histogram_quantiles(
    definition: str, buckets: list[tuple[float, float]], count: float, percentiles: tuple[float, ...]
) -> HistogramQuantiles:
    """Quantiles (percentiles given as 50, 90, 99) of the window's bucket increases."""
    found = {percentile_key(p): bucket_quantile(p / 100, buckets) for p in percentiles}
    return HistogramQuantiles(
        definition=definition,
        n=int(round(count)),
        quantiles={k: v for k, v in found.items() if v is not None},
    )
