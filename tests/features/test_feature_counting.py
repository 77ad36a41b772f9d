from tests.features.feature_fixtures import SMALL_COUNT, SMALL_UVL
from tuner.features.configs import load_bundled
from tuner.features.space import FeatureSpace, brute_force_count
from tuner.features.uvl import parse_uvl


def test_small_model_count_matches_hand_count_and_brute_force():
    s = FeatureSpace(parse_uvl(SMALL_UVL))
    assert s.count() == SMALL_COUNT
    assert s.count_walk() == SMALL_COUNT
    assert brute_force_count(s) == SMALL_COUNT
    assert len(set(s.enumerate())) == SMALL_COUNT


def test_constraints_cut_the_count():
    m = parse_uvl(SMALL_UVL)
    assert FeatureSpace(m, constraints=False).count() > FeatureSpace(m).count()


def test_cardinality_group_count():
    m = parse_uvl("features\n    R\n        [1..2]\n            a\n            b\n            c\n")
    assert FeatureSpace(m).count() == 3 + 3  # one of three, or two of three


def test_bundled_models_exact_counts_agree_between_counters():
    # exact figures of the shipped models (they change only when the model or its derivation changes)
    expected = {"generation_config": (71, 18, 63_846_792), "vllm_serving": (43, 3, 594_864)}
    for name, (n_features, n_constraints, count) in expected.items():
        m = load_bundled(name)
        s = FeatureSpace(m)
        assert (len(s.names), len(m.constraints)) == (n_features, n_constraints)
        assert s.count() == count
        assert s.count_walk() == count


def test_validity_and_dead_features():
    s = FeatureSpace(load_bundled("generation_config"))
    assert "Contrastive" in s.dead_features()  # transformers 5 rejects top_k without sampling
    assert s.is_valid(s.pick_min({"Greedy": True}))
    assert not s.is_valid(s.pick_min({"Greedy": True}) | {"Temperature", "temperature_0_2"})
