"""The test spec builder (tests/support/spec_builder.py): overrides merge, replace and delete by key, and the
spec it writes is one the tool's own loader reads with the values the dicts state."""

from __future__ import annotations

import pytest

from factsheet.spec.build import load_spec
from probes.core.errors import InputError
from tests.support.mock_spec import endpoint_spec, endpoint_spec_dict
from tests.support.spec_builder import DELETE, merged, write_spec


def test_mappings_merge_lists_and_scalars_replace_delete_removes():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 2, "c": {"k": 1}}
    out = merged(base, {"a": {"y": [3], "z": {"new": DELETE, "kept": 1}}, "b": DELETE, "c": 5, "d": [4]})
    assert out == {"a": {"x": 1, "y": [3], "z": {"kept": 1}}, "c": 5, "d": [4]}
    assert base == {"a": {"x": 1, "y": [1, 2]}, "b": 2, "c": {"k": 1}}  # the base is not changed


def test_deleting_an_absent_key_is_no_change():
    assert merged({"a": 1}, {"b": DELETE}) == {"a": 1}


def test_the_built_spec_loads_through_the_tools_loader(tmp_path):
    overrides = {
        "load": {"slo": {"e2el_ms": 450, "ttft_ms": DELETE, "tpot_ms": DELETE}, "output_len": 4},
        "target": {"api_key_env": "FACTSHEET_TEST_KEY"},
    }
    spec, raw = load_spec(
        endpoint_spec(tmp_path, "http://127.0.0.1:9", points=((2, 6),), overrides=overrides)
    )
    assert spec.name == "mock-endpoint" and spec.model.name == "mock-model"
    assert spec.target.base_url == "http://127.0.0.1:9" and spec.target.api_key_env == "FACTSHEET_TEST_KEY"
    assert spec.load.input_len == 16 and spec.load.output_len == 4
    assert spec.load.slo.e2el_ms == 450 and spec.load.slo.ttft_ms is None and spec.load.slo.tpot_ms is None
    assert [(p.concurrency, p.num_requests) for p in spec.load.points] == [(2, 6)]
    assert raw == (tmp_path / "model.yaml").read_bytes()


def test_a_deleted_required_key_is_the_loaders_bad_input(tmp_path):
    path = write_spec(
        tmp_path / "model.yaml", endpoint_spec_dict("http://127.0.0.1:9", overrides={"model": DELETE})
    )
    with pytest.raises(InputError, match="model"):
        load_spec(path)
