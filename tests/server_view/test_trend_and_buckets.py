"""The saturation test on series whose trend is known, and histogram quantiles on buckets whose answer is
known (Prometheus's histogram_quantile semantics)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from probes.server_view.histogram import bucket_quantile
from probes.server_view.saturation import MIN_POINTS, saturation, ttft_trend, waiting_trend

T = [0.5 * i for i in range(40)]  # a scrape every 0.5 s for 20 s


def test_a_growing_queue_is_flagged():
    test = waiting_trend(T, [float(i // 2) for i in range(40)])  # +1 request a second
    assert test.grows and test.p_value < 0.01 and test.slope_ci[0] > 0
    assert test.slope_per_s == pytest.approx(1.0, abs=0.05) and test.growth == pytest.approx(19.5, abs=1)


def test_a_growing_ttft_is_flagged():
    rng = np.random.default_rng(1)
    ttft = [200 + 40 * t + rng.normal(0, 30) for t in T]  # +40 ms a second under noise
    test = ttft_trend(T, ttft)
    assert test.grows and test.slope_per_s == pytest.approx(40, rel=0.2)
    assert saturation(None, test).over_saturated


@pytest.mark.parametrize("seed", range(5))
def test_a_flat_noisy_queue_is_not_flagged(seed):
    rng = np.random.default_rng(seed)
    assert not waiting_trend(T, [float(v) for v in rng.poisson(3, 40)]).grows


def test_a_queue_that_fills_once_and_holds_is_not_flagged():
    """A closed loop above the batch limit: the queue reaches its level in the first scrapes and stays."""
    assert not waiting_trend(T, [0.0, 2.0] + [4.0] * 38).grows


def test_flat_noisy_ttft_is_not_flagged():
    rng = np.random.default_rng(7)
    assert not ttft_trend(T, list(300 + rng.normal(0, 60, 40))).grows


def test_a_small_steady_rise_is_not_unbounded_growth():
    """Significant, but the queue grows by one request over the run: below the stated growth threshold."""
    test = waiting_trend(T, [0.0] * 20 + [1.0] * 20)
    assert not test.grows and test.growth is not None and test.growth < 2


def test_too_few_values_are_not_tested():
    test = waiting_trend(T[: MIN_POINTS - 1], list(range(MIN_POINTS - 1)))
    assert not test.grows and test.reason and test.p_value is None


BUCKETS = [(0.1, 0.0), (0.25, 10.0), (0.5, 18.0), (1.0, 20.0), (math.inf, 20.0)]


@pytest.mark.parametrize(
    ("q", "estimate", "lower", "upper"),
    [
        (0.5, 250.0, 100.0, 250.0),
        (0.25, 175.0, 100.0, 250.0),
        (0.9, 500.0, 250.0, 500.0),
        (0.99, 950.0, 500.0, 1000.0),
    ],
)
def test_bucket_quantiles_interpolate_inside_their_bucket(q, estimate, lower, upper):
    got = bucket_quantile(q, BUCKETS)
    assert got.estimate_ms == pytest.approx(estimate)
    assert (got.bucket_lower_ms, got.bucket_upper_ms) == (lower, upper)


def test_a_quantile_in_the_inf_bucket_has_no_estimate():
    got = bucket_quantile(0.99, [(0.1, 5.0), (math.inf, 10.0)])
    assert got.estimate_ms is None and got.bucket_lower_ms == 100.0 and got.bucket_upper_ms is None


def test_an_empty_histogram_has_no_quantile():
    assert bucket_quantile(0.5, [(0.1, 0.0), (math.inf, 0.0)]) is None
