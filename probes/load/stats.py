"""How much a percentile or goodput figure can be trusted: sample sufficiency and confidence intervals.

Sufficiency follows MLPerf LoadGen's early-stopping rule: a claim "the q-th percentile is ≤ T" at
confidence c holds when, with t of n samples above T, P(Binomial(n, 1 − q) ≤ t) ≤ 1 − c. The
binomial tail is taken from scipy's beta distribution (P(X ≤ t) = I_q(n − t, t + 1)).
"""

from __future__ import annotations

import functools
import math
from typing import Literal

import numpy as np
from pydantic import Field

from probes.core.errors import InputError
from probes.core.measurement import Bounded, Model

EARLY_STOPPING_RULE = (
    "MLPerf LoadGen early stopping: n samples with t above the threshold support 'p{q} ≤ threshold' at "
    "confidence c when P(Binomial(n, 1 − q/100) ≤ t) ≤ 1 − c; without a threshold, t = 0 (the fewest "
    "samples any p{q} claim can rest on)"
)
QUANTILE_CI_METHOD = (
    "distribution-free order-statistic interval: ranks from the Binomial(n, q) quantiles, "
    "exact coverage stated"
)
PROPORTION_CI_METHOD = "Clopper–Pearson exact binomial interval"
VERDICT_RULE = (
    "a claim 'p{q} ≤ threshold' is a conclusive pass when MLPerf early stopping supports it (its one-sided "
    "99 % bound lies within the threshold), a conclusive fail when the 95 % order-statistic interval of "
    "p{q} lies wholly above the threshold, and insufficient when the samples cannot decide either way"
)
Verdict = Literal["conclusive_pass", "conclusive_fail", "insufficient"]
VERDICT_NAMES: dict[str, str] = {  # the verdicts in words, wherever a document shows one
    "conclusive_pass": "conclusive pass",
    "conclusive_fail": "conclusive fail",
    "insufficient": "insufficient samples",
}


class StatsError(InputError):
    """An impossible statistics request (bad percentile, confidence or count)."""


class SampleSufficiency(Model):
    """Whether a percentile figure rests on enough samples to be claimed (MLPerf early stopping)."""

    percentile: float
    n: int = Field(ge=0, description="samples the percentile rests on")
    threshold_ms: float | None = Field(description="SLO threshold the claim is about; None: no threshold")
    violations: int = Field(ge=0, description="samples above the threshold (0 when there is none)")
    n_required: int | None = Field(
        description="fewest samples that would support the claim with this violation count; "
        "None when the violations already exceed what any n can support"
    )
    confidence: float
    sufficient: bool
    rule: str
    verdict: Verdict | None = Field(
        None,
        description="what the samples decide about the claim: "
        + VERDICT_RULE.format(q="99")
        + "; None without a threshold (no claim to decide)",
    )


class QuantileCI(Bounded, Model):
    """Confidence interval for a population quantile from the sample's order statistics."""

    percentile: float
    n: int
    estimate: float | None
    lower: float | None = Field(description="None: too few samples for a lower bound at this confidence")
    upper: float | None = Field(description="None: too few samples for an upper bound at this confidence")
    confidence: float = Field(description="requested confidence")
    coverage: float | None = Field(
        description="exact coverage of [lower, upper] (≥ confidence when both exist)"
    )
    method: str = QUANTILE_CI_METHOD


class ProportionCI(Bounded, Model):
    successes: int
    trials: int
    estimate: float | None
    lower: float | None
    upper: float | None
    confidence: float
    method: str = PROPORTION_CI_METHOD


def _check(percentile: float, confidence: float) -> tuple[float, float]:
    if not 0 < percentile < 100:
        raise StatsError(f"percentile must be in (0, 100), got {percentile}")
    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be in (0, 1), got {confidence}")
    return percentile / 100.0, 1.0 - confidence


def _tail_prob(n: int, t: int, q: float) -> float:
    """P(Binomial(n, 1 − q) ≤ t), via the regularized incomplete beta function."""
    # deferred: importing scipy.stats costs every command ~0.7 s of CPU at its start
    from scipy.stats import beta

    return float(beta.cdf(q, n - t, t + 1)) if n > t else 1.0


# Pure in its arguments, and asked for the same few (percentile, violations) again and again: for each metric
# of each run of a build, and again by every re-derivation (`validate`, `diff`, the catalogue's hundreds).
@functools.lru_cache(maxsize=4096)
def min_samples(percentile: float = 99.0, violations: int = 0, confidence: float = 0.99) -> int | None:
    """Fewest samples for a 'p{percentile} ≤ threshold' claim with `violations` samples above it
    (459 for p99 with none at 99 % confidence). None beyond 10⁹ samples."""
    q, alpha = _check(percentile, confidence)
    if violations < 0:
        raise StatsError(f"violations must be ≥ 0, got {violations}")
    lo = violations + 1
    hi = max(lo, 2 * math.ceil((violations + 1) / (1 - q)))
    while _tail_prob(hi, violations, q) > alpha:
        hi *= 2
        if hi > 10**9:
            return None
    # The tail probability falls as n grows with t fixed: bisect for the first n that passes.
    while lo < hi:
        mid = (lo + hi) // 2
        if _tail_prob(mid, violations, q) <= alpha:
            hi = mid
        else:
            lo = mid + 1
    return lo


def sample_sufficiency(
    values: list[float] | np.ndarray,
    *,
    percentile: float = 99.0,
    threshold: float | None = None,
    confidence: float = 0.99,
    interval_confidence: float = 0.95,
) -> SampleSufficiency:
    """Whether `values` support 'p{percentile} ≤ threshold' (MLPerf early stopping at `confidence`), and
    the verdict on that claim (`claim_verdict`, with the `interval_confidence` interval of the percentile)."""
    arr = np.asarray(values, dtype=float)
    t = int((arr > threshold).sum()) if threshold is not None else 0
    need = min_samples(percentile, t, confidence)
    sufficient = need is not None and arr.size >= need
    return SampleSufficiency(
        percentile=percentile,
        n=int(arr.size),
        threshold_ms=threshold,
        violations=t,
        n_required=need,
        confidence=confidence,
        sufficient=sufficient,
        rule=EARLY_STOPPING_RULE.format(q=f"{percentile:g}"),
        verdict=None
        if threshold is None
        else claim_verdict(sufficient, quantile_ci(arr, percentile, interval_confidence), threshold),
    )


def claim_verdict(sufficient: bool, interval: QuantileCI, threshold: float) -> Verdict:
    """What n samples decide about the claim 'p{q} ≤ threshold': the one place this verdict is made.

    - conclusive pass: MLPerf early stopping supports the claim (`sufficient`): its one-sided 99 % bound
      lies within the threshold, so the 95 % interval does too;
    - conclusive fail: the 95 % order-statistic interval of p{q} lies wholly above the threshold (its lower
      end exceeds it), however few samples it rests on: more samples would only narrow it;
    - insufficient: neither, i.e. the interval straddles the threshold (or has no lower end): the samples
      cannot decide, and more of them could.
    """
    if sufficient:
        return "conclusive_pass"
    if interval.lower is not None and interval.lower > threshold:
        return "conclusive_fail"
    return "insufficient"


@functools.lru_cache(maxsize=4096)
def _ranks(n: int, q: float, alpha: float) -> tuple[int, int, float]:
    """The order statistics' 1-based ranks of the interval and its exact coverage (when both are in range):
    P(X_(l) ≤ ξ_q) = P(Bin(n, q) ≥ l), P(ξ_q < X_(u)) = P(Bin(n, q) ≤ u − 1). Pure in (n, q, α), cached
    like `min_samples`."""
    # deferred: importing scipy.stats costs every command ~0.7 s of CPU at its start
    from scipy.stats import binom

    lo_rank = int(binom.ppf(alpha / 2, n, q))
    hi_rank = int(binom.ppf(1 - alpha / 2, n, q)) + 1
    return lo_rank, hi_rank, float(binom.cdf(hi_rank - 1, n, q) - binom.cdf(lo_rank - 1, n, q))


def quantile_ci(values: list[float] | np.ndarray, percentile: float, confidence: float = 0.95) -> QuantileCI:
    """Two-sided order-statistic CI: [X_(l), X_(u)] with l, u the binomial (α/2, 1 − α/2) ranks."""
    q, alpha = _check(percentile, confidence)
    arr = np.sort(np.asarray(values, dtype=float))
    n = int(arr.size)
    if n == 0:
        return QuantileCI(
            percentile=percentile,
            n=0,
            estimate=None,
            lower=None,
            upper=None,
            confidence=confidence,
            coverage=None,
        )
    lo_rank, hi_rank, coverage = _ranks(n, q, alpha)
    lower = float(arr[lo_rank - 1]) if lo_rank >= 1 else None
    upper = float(arr[hi_rank - 1]) if hi_rank <= n else None
    if lower is None or upper is None:
        coverage = None
    return QuantileCI(
        percentile=percentile,
        n=n,
        estimate=float(np.percentile(arr, percentile, method="linear")),
        lower=lower,
        upper=upper,
        confidence=confidence,
        coverage=coverage,
    )


def proportion_ci(successes: int, trials: int, confidence: float = 0.95) -> ProportionCI:
    """Clopper–Pearson interval, written with scipy's beta quantiles."""
    # deferred: importing scipy.stats costs every command ~0.7 s of CPU at its start
    from scipy.stats import beta

    if not 0 < confidence < 1:
        raise StatsError(f"confidence must be in (0, 1), got {confidence}")
    if trials < 0 or not 0 <= successes <= trials:
        raise StatsError(f"need 0 ≤ successes ≤ trials, got {successes}/{trials}")
    if trials == 0:
        return ProportionCI(
            successes=0, trials=0, estimate=None, lower=None, upper=None, confidence=confidence
        )
    alpha = 1 - confidence
    lower = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, trials - successes + 1))
    upper = 1.0 if successes == trials else float(beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    return ProportionCI(
        successes=successes,
        trials=trials,
        estimate=successes / trials,
        lower=lower,
        upper=upper,
        confidence=confidence,
    )
