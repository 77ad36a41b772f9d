"""The model agrees with the installed library: sampled configurations are accepted, known-invalid ones
rejected by both. Runs the serving environment's python (transformers, vLLM) as a subprocess."""

import pytest

from tuner.features import sampling
from tuner.features.configs import kwargs_of, load_bundled
from tuner.features.derive import check_with_library, serving_python
from tuner.features.space import FeatureSpace

PYTHON = serving_python()
pytestmark = [
    pytest.mark.system,  # the serving environment's libraries, in a process
    pytest.mark.skipif(
        PYTHON is None, reason="serving environment (.venv-vllm or $FACTSHEET_VLLM_PYTHON) not installed"
    ),
]

# (strategy or anchor features, features that the library rejects with them)
KNOWN_INVALID = {
    "generation_config": [
        ({"Greedy": True}, {"Temperature", "temperature_0_6"}),  # sampling option without sampling
        ({"BeamSearch": True}, {"TopP", "top_p_0_5"}),
        ({"Multinomial": True}, {"LengthPenalty", "length_penalty_2_0"}),  # beam option without beams
        ({"PromptLookup": True}, {"EarlyStopping", "early_stopping_True"}),
        ({"Multinomial": True}, {"CacheImplementation", "cache_implementation_static", "NoKVCache"}),
    ],
    "vllm_serving": [
        ({"max_num_seqs_64": True, "NoChunkedPrefill": False}, {"max_num_batched_tokens_32"}),
        ({"NoChunkedPrefill": True}, {"max_num_batched_tokens_256"}),
    ],
}


def _swap_level(space, config, extra):
    """config with `extra` added and the alternatives they displace removed (same group)."""
    parents = space.model.parents()
    out = set(config)
    for f in extra:
        siblings = [c.name for c in space.model.feature(parents[f]).children] if f in parents else []
        if space.model.feature(parents[f]).groups[0].kind == "alternative":
            out -= set(siblings)
    return frozenset(out | set(extra))


@pytest.mark.parametrize("name", ["generation_config", "vllm_serving"])
def test_every_sampled_configuration_is_accepted_by_the_library(name):
    model = load_bundled(name)
    space = FeatureSpace(model)
    configs = list(sampling.twise(space, 2, seed=3).configs) + list(
        sampling.uniform(space, 60, seed=3).configs
    )
    versions, results = check_with_library(model, [kwargs_of(model, c) for c in configs], PYTHON)
    assert model.root.attributes["library_version"] in versions.values(), "model derived for another version"
    bad = [(kwargs_of(model, c), r["error"]) for c, r in zip(configs, results, strict=True) if not r["ok"]]
    assert not bad, bad[:3]


@pytest.mark.parametrize("name", ["generation_config", "vllm_serving"])
def test_known_invalid_configurations_are_rejected_by_model_and_library(name):
    model = load_bundled(name)
    space = FeatureSpace(model)
    configs = []
    for anchor, extra in KNOWN_INVALID[name]:
        config = _swap_level(space, space.pick_min(anchor), extra)
        assert not space.is_valid(config), (anchor, extra)
        configs.append(config)
    _, results = check_with_library(model, [kwargs_of(model, c) for c in configs], PYTHON)
    accepted = [kwargs_of(model, c) for c, r in zip(configs, results, strict=True) if r["ok"]]
    assert not accepted
