"""The between-run spread of a figure and its rebuild interval: where the next build's figure should fall.

With k repeats x₁…x_k of a figure (mean x̄, sample sd s), the next build's value X is, if the runs are
independent draws from one normal distribution, within x̄ ± t(k − 1, 0.975) · s · √(1 + 1/k) with
probability 95 %: the normal-theory prediction interval for one new observation (its √(1 + 1/k): the new
run's own spread plus the uncertainty of x̄). A nonparametric interval needs more runs: the range of k runs
covers a next one with probability (k − 1)/(k + 1) only, 50 % at k = 3, 95 % from k = 39.
"""

from __future__ import annotations

import math
import statistics

from scipy.stats import t as student_t

from factsheet.document.headline.model import Interval, Rebuild

CONFIDENCE = 0.95
MIN_REPEATS = 3  # two runs give one degree of freedom: t(1, 0.975) = 12.7, an interval that says nothing
REBUILD_METHOD = (
    f"normal-theory prediction interval for the next build's value: mean ± t(k − 1, "
    f"{1 - (1 - CONFIDENCE) / 2:g}) · s · √(1 + 1/k), over the k repeats' values (s their sample standard "
    f"deviation); {CONFIDENCE:.0%} if the repeats are independent draws of one normal distribution"
)

# A figure that cannot be negative (a latency, a rate, a share) gets no negative lower end (schema >= 1.8.0:
# before, the normal interval of a widely spread figure could state one, e.g. −302 ms for a p99 E2EL).
FLOOR_METHOD = f"{REBUILD_METHOD}; its lower end no less than 0, as the figure cannot be negative"


def t_quantile(df: int, confidence: float = CONFIDENCE) -> float:
    """The two-sided Student t quantile t(df, 1 − (1 − confidence)/2)."""
    return float(student_t.ppf(1 - (1 - confidence) / 2, df))


def rebuild_interval(
    values: list[float], confidence: float = CONFIDENCE
) -> tuple[float, float, float, float]:
    """(mean, sd, lower, upper) of `values` (k ≥ 3): the prediction interval of REBUILD_METHOD."""
    k = len(values)
    if k < MIN_REPEATS:
        raise ValueError(f"a rebuild interval needs ≥ {MIN_REPEATS} values, got {k}")
    mean = statistics.fmean(values)
    sd = statistics.stdev(values)
    half = t_quantile(k - 1, confidence) * sd * math.sqrt(1 + 1 / k)
    return mean, sd, mean - half, mean + half


def summary(of: str, values: list[float | None], sources: list[str], isolation: str, *, passed: int | None = None,
            busy: int = 0, floor: bool = False) -> Rebuild:  # fmt: skip
    """A figure over its k repeats (`values` in run order, None where a run gave none): spread and rebuild
    interval over those with a value, none when fewer than MIN_REPEATS have one; `floor`: the lower end is no
    less than 0 (FLOOR_METHOD)."""
    known = [v for v in values if v is not None]
    mean = sd = interval = None
    if len(known) >= MIN_REPEATS:
        mean, sd, lower, upper = rebuild_interval(known)
        if floor:
            lower = max(lower, 0.0)
        interval = Interval(lower=lower, upper=upper, method=FLOOR_METHOD if floor else REBUILD_METHOD)
    return Rebuild(of=of, k=len(values), values=values, sources=sources, mean=mean, sd=sd, interval=interval,
                   isolation=isolation, passed=passed, busy=busy)  # fmt: skip
