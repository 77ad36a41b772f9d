import math

import numpy as np
import pytest

from probes.load.stats import StatsError, min_samples, proportion_ci, quantile_ci, sample_sufficiency


def test_early_stopping_p99_needs_459_without_violations():
    assert min_samples(99.0, 0, 0.99) == 459
    # Closed form for t = 0: 0.99^n ≤ 0.01.
    assert min_samples(99.0, 0, 0.99) == math.ceil(math.log(0.01) / math.log(0.99))


def test_early_stopping_grows_with_violations():
    needs = [min_samples(99.0, t, 0.99) for t in range(4)]
    assert needs == [459, 662, 838, 1001]


def test_sufficiency_flags_one_sample_short():
    short = sample_sufficiency(np.ones(458), percentile=99, threshold=2.0)
    enough = sample_sufficiency(np.ones(459), percentile=99, threshold=2.0)
    assert (short.sufficient, short.n_required) == (False, 459)
    assert enough.sufficient


def test_sufficiency_counts_violations_of_the_threshold():
    values = np.concatenate([np.ones(600), [5.0]])  # one violation: 662 needed
    s = sample_sufficiency(values, percentile=99, threshold=2.0)
    assert (s.violations, s.n_required, s.sufficient) == (1, 662, False)


def test_bad_percentile_is_an_error():
    with pytest.raises(StatsError, match="percentile"):
        min_samples(100.0)


@pytest.mark.parametrize(("q", "n"), [(50, 60), (99, 1500)])
def test_quantile_ci_covers_the_true_quantile(q, n):
    rng = np.random.default_rng(1)
    truth = -math.log(1 - q / 100)  # exponential(1) quantile
    trials, hits = 400, 0
    for _ in range(trials):
        ci = quantile_ci(rng.exponential(size=n), q, 0.95)
        assert ci.coverage is not None and ci.coverage >= 0.95
        hits += ci.lower <= truth <= ci.upper
    assert hits / trials >= 0.92  # nominal ≥ 95 %; binomial noise over 400 trials stays above 92 %


def test_quantile_ci_refuses_bounds_it_cannot_give():
    ci = quantile_ci(np.arange(50.0), 99, 0.95)
    assert ci.upper is None and ci.coverage is None


def test_proportion_ci_known_values_and_coverage():
    ci = proportion_ci(0, 10, 0.95)
    assert ci.lower == 0 and ci.upper == pytest.approx(1 - 0.025 ** (1 / 10))
    rng = np.random.default_rng(2)
    hits = sum(
        (c := proportion_ci(int(k), 80, 0.95)).lower <= 0.7 <= c.upper for k in rng.binomial(80, 0.7, 500)
    )
    assert hits / 500 >= 0.93
