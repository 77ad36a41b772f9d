import pytest

from tests.features.feature_fixtures import SMALL_UVL
from tuner.features.configs import bundled_text, kwargs_of, load_bundled
from tuner.features.uvl import UVLError, expr_to_uvl, parse_uvl


def test_parses_every_construct_we_use():
    m = parse_uvl(SMALL_UVL)
    assert m.namespace == "Small"
    assert m.root.name == "Root" and m.root.abstract
    kinds = [g.kind for f in m.features() for g in f.groups]
    assert kinds == ["mandatory", "optional", "alternative", "alternative", "or"]
    assert m.feature("t_low").attributes == {"value": 0.2}
    assert m.feature("Sampling").attributes == {"do_sample": True}
    assert m.feature("Two Words").attributes == {"doc": "a quoted name"}
    assert [expr_to_uvl(c) for c in m.constraints] == ["Temperature => Sampling", 'Beam => !"Two Words"']


def test_operator_precedence_and_associativity():
    m = parse_uvl(
        "features\n    R\n        optional\n            a\n            b\n            c\nconstraints\n"
        "    !a & b | c <=> a => b => c\n"
    )
    assert m.constraints[0] == (
        "iff",
        ("or", ("and", ("not", ("var", "a")), ("var", "b")), ("var", "c")),
        ("implies", ("var", "a"), ("implies", ("var", "b"), ("var", "c"))),
    )


def test_cardinality_groups():
    m = parse_uvl(
        "features\n    R\n        [1..2]\n            a\n            b\n            c\n        [2]\n"
        "            d\n            e\n"
    )
    g1, g2 = m.root.groups
    assert (g1.kind, g1.low, g1.high) == ("cardinality", 1, 2)
    assert (g2.low, g2.high) == (2, 2)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("features\n    R\n        optional\n      a\n", "line"),  # bad dedent
        ("features\n    R\nconstraints\n    R => Q\n", "unknown feature(s): Q"),
        ("features\n    R\n        optional\n            a\n            a\n", "repeated: a"),
        ("features\n    R\n        [3..1]\n            a\n", "impossible"),
        ("features\n    R {value, }\n", "line 2"),
    ],
)
def test_bad_models_get_one_clear_error(text, needle):
    with pytest.raises(UVLError, match=None) as exc:
        parse_uvl(text)
    assert needle in str(exc.value)
    assert "\n" not in str(exc.value)


def test_bundled_models_are_package_data_and_parse():
    for name in ("generation_config", "vllm_serving"):
        m = load_bundled(name)
        assert m.root.attributes["library_version"], "the derivation records the library version"
        assert "// derived from" in bundled_text(name)


def test_kwargs_follow_param_value_and_target():
    m = load_bundled("vllm_serving")
    kw = kwargs_of(
        m,
        {
            "VllmServing",
            "Sampling",
            "Temperature",
            "temperature_0_6",
            "Engine",
            "MaxNumSeqs",
            "max_num_seqs_16",
            "NoChunkedPrefill",
        },
    )
    assert kw == {
        "request": {"temperature": 0.6},
        "engine": {"max_num_seqs": 16, "enable_chunked_prefill": False},
    }
