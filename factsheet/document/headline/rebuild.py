"""The between-run spread of a figure and its rebuild interval: where the next build's figure should fall.

With k repeats x₁…x_k of a figure (mean x̄, sample sd s), the next build's value X is, if the runs are
independent draws from one normal distribution, within x̄ ± t(k − 1, 0.975) · s · √(1 + 1/k) with
probability 95 %: the normal-theory prediction interval for one new observation (its √(1 + 1/k): the new
run's own spread plus the uncertainty of x̄). A nonparametric interval needs more runs: the range of k runs
covers a next one with probability (k − 1)/(k + 1) only, 50 % at k = 3, 95 % from k = 39.

Two guards (schema >= 1.9.0, WIDEN_METHOD). k = 3 runs can agree by chance, most often for a figure that takes
few values (an attainment of 432 of 459 in each of three runs: s = 0, an interval of zero width), yet a next
build's value still carries its own run's sampling noise. So the half-width is no less than the repeats' mean
within-run 95 % half-width × √(1 + 1/k): the same prediction form, with the within-run interval standing for
t · s. And a share (attainment) cannot exceed 1, so its upper end is no more than 1, as no figure's lower end
is less than 0 (FLOOR_METHOD, from 1.8.0).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from factsheet.document.headline_model import Interval, Rebuild
from factsheet.document.rules import RuleSet
from factsheet.document.rules.registry import CONFIDENCE, FLOOR_METHOD, REBUILD_METHOD, WIDEN_METHOD

MIN_REPEATS = 3  # two runs give one degree of freedom: t(1, 0.975) = 12.7, an interval that says nothing
SHARE_METHOD = f"{WIDEN_METHOD}; its upper end no more than 1, as the figure is a share"


@dataclass(frozen=True)
class Guards:
    """Which guards a document's rebuild intervals carry, by the rules that judged it: `floor`
    (rebuild/floor), `widen` (rebuild/widen, with a share's ceiling). Read once per document, so the build
    and `validate` apply the same."""

    floor: bool
    widen: bool

    @classmethod
    def of(cls, rules: RuleSet) -> Guards:
        return cls("rebuild/floor" in rules, "rebuild/widen" in rules)


def t_quantile(df: int, confidence: float = CONFIDENCE) -> float:
    """The two-sided Student t quantile t(df, 1 − (1 − confidence)/2)."""
    # deferred: importing scipy.stats costs every command ~0.7 s of CPU at its start
    from scipy.stats import t as student_t

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


def within_half(intervals: list[tuple[float, float] | None]) -> float | None:
    """The repeats' mean within-run half-width, over those whose interval has both ends (None: none has)."""
    halves = [(b[1] - b[0]) / 2 for b in intervals if b is not None]
    return statistics.fmean(halves) if halves else None


def summary(of: str, values: list[float | None], sources: list[str], isolation: str, *, passed: int | None = None,
            busy: int = 0, floor: bool = False, within: list[tuple[float, float] | None] | None = None,
            share: bool = False) -> Rebuild:  # fmt: skip
    """A figure over its k repeats (`values` in run order, None where a run gave none): spread and rebuild
    interval over those with a value, none when fewer than MIN_REPEATS have one; `floor`: the lower end is no
    less than 0 (FLOOR_METHOD); `within` (schema >= 1.9.0): each repeat's own interval, the half-width's least
    (WIDEN_METHOD); `share` (with `within`): the upper end no more than 1 (SHARE_METHOD)."""
    known = [v for v in values if v is not None]
    mean = sd = interval = None
    if len(known) >= MIN_REPEATS:
        mean, sd, lower, upper = rebuild_interval(known)
        method = FLOOR_METHOD if floor else REBUILD_METHOD
        if within is not None:
            least = (within_half(within) or 0.0) * math.sqrt(1 + 1 / len(known))
            lower, upper = min(lower, mean - least), max(upper, mean + least)
            method = SHARE_METHOD if share else WIDEN_METHOD
            if share:
                upper = min(upper, 1.0)
        if floor:
            lower = max(lower, 0.0)
        interval = Interval(lower=lower, upper=upper, method=method)
    return Rebuild(of=of, k=len(values), values=values, sources=sources, mean=mean, sd=sd, interval=interval,
                   isolation=isolation, passed=passed, busy=busy)  # fmt: skip
