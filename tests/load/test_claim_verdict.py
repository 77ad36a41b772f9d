"""What samples decide about 'p99 ≤ threshold' (probes.load.stats.claim_verdict), at its edges: a pass needs
MLPerf early stopping's n; a fail needs the 95 % interval of p99 wholly above the threshold; else the
samples cannot decide."""

from __future__ import annotations

import numpy as np

from probes.load.stats import quantile_ci, sample_sufficiency


def _verdict(values, threshold):
    return sample_sufficiency(values, threshold=threshold).verdict


def test_a_pass_is_conclusive_from_early_stoppings_n():
    # 459 samples, none above: the fewest that support a p99 claim at 99 % (MLPerf); 458 do not.
    assert _verdict(np.full(459, 100.0), 200.0) == "conclusive_pass"
    assert _verdict(np.full(458, 100.0), 200.0) == "insufficient"


def test_a_fail_is_conclusive_when_the_interval_lies_wholly_above():
    # n = 499: the 95 % interval of p99 is [X(489), X(499)]; eleven samples at or above X(489).
    values = np.concatenate([np.linspace(100, 190, 488), np.linspace(201, 300, 11)])
    assert quantile_ci(values, 99).lower == 201.0
    assert _verdict(values, 200.0) == "conclusive_fail"
    assert _verdict(values, 201.0) == "insufficient"  # the interval's lower end on the threshold: undecided


def test_few_samples_all_above_are_a_conclusive_fail_and_without_a_threshold_nothing_is_decided():
    assert _verdict(np.full(63, 10_000.0), 4_500.0) == "conclusive_fail"
    # 20 samples, the top one above: the interval [X(19), X(20)] straddles the threshold.
    assert _verdict(np.append(np.full(19, 4_000.0), 10_000.0), 4_500.0) == "insufficient"
    assert _verdict(np.full(600, 10.0), None) is None
