import random
from collections import Counter

from scipy.stats import chisquare

from tests.features.feature_fixtures import SMALL_COUNT, SMALL_UVL
from tuner.features import sampling
from tuner.features.configs import load_bundled
from tuner.features.space import FeatureSpace
from tuner.features.uvl import parse_uvl


def test_pairwise_covers_every_valid_pair_of_model_a():
    s = FeatureSpace(load_bundled("generation_config"))
    valid = sampling.valid_tuples(s, 2)
    smp = sampling.twise(s, 2, seed=1)
    assert all(s.is_valid(c) for c in smp.configs)
    assert sampling.coverage(s, smp.configs, 2, valid) == 1.0
    assert len(smp.configs) < 80
    assert sampling.twise(s, 2, seed=1).configs == smp.configs  # seeded, reproducible


def test_threewise_covers_every_valid_triple():
    s = FeatureSpace(parse_uvl(SMALL_UVL))
    smp = sampling.twise(s, 3, seed=0)
    assert sampling.coverage(s, smp.configs, 3) == 1.0
    assert all(s.is_valid(c) for c in smp.configs)


def test_uniform_sampling_is_uniform_chi_square():
    s = FeatureSpace(parse_uvl(SMALL_UVL))
    n = 200 * SMALL_COUNT
    counts = Counter(s.uniform(random.Random(7), n))
    assert len(counts) == SMALL_COUNT and all(s.is_valid(c) for c in counts)
    assert chisquare(list(counts.values())).pvalue > 1e-3


def test_chi_square_detects_a_biased_walk():
    # the test above can fail: a walk that tosses a fair coin at each branch is not uniform, and is caught
    s = FeatureSpace(parse_uvl(SMALL_UVL))
    rng = random.Random(7)
    biased = []
    for _ in range(200 * SMALL_COUNT):
        given: dict[str, bool] = {}
        for name in s.names:
            options = [v for v in (False, True) if s.satisfiable({**given, name: v})]
            given[name] = rng.choice(options)
        biased.append(frozenset(k for k, v in given.items() if v))
    counts = Counter(biased)
    assert chisquare([counts[c] for c in s.enumerate()]).pvalue < 1e-6


def test_uniform_beats_nothing_on_coverage_but_twise_is_complete():
    s = FeatureSpace(load_bundled("vllm_serving"))
    valid = sampling.valid_tuples(s, 2)
    tw = sampling.twise(s, 2, seed=0)
    un = sampling.uniform(s, len(tw.configs), seed=0)
    assert sampling.coverage(s, tw.configs, 2, valid) == 1.0
    assert sampling.coverage(s, un.configs, 2, valid) < 1.0
