"""`--constraint NAME>=X` and the spec's `constraints: {NAME: '>=X'}` are read by one grammar
(factsheet.document.predictor.parse_constraints): the same constraint gives the same condition either way,
and a malformed one is bad input naming where it came from."""

from __future__ import annotations

import pytest

from factsheet import InputError, predict_campaign
from factsheet.api.predictor import _constraints


@pytest.mark.parametrize(
    ("flag", "spec", "condition"),
    [
        ("pass_at_1>=0.05", {"pass_at_1": ">=0.05"}, {"pass_at_1": (">=", 0.05)}),
        ("e2el_p50_ms <= 250", {"e2el_p50_ms": "<= 250"}, {"e2el_p50_ms": ("<=", 250.0)}),
    ],
)
def test_flag_and_spec_spellings_give_the_same_condition(flag, spec, condition):
    assert _constraints([flag]) == _constraints(spec) == condition


@pytest.mark.parametrize(
    ("given", "where"), [(["pass_at_1>x"], "--constraint"), ({"cpu_s": "=3"}, "constraints")]
)
def test_a_malformed_constraint_names_where_it_came_from(tmp_path, given, where):
    with pytest.raises(InputError, match=where):
        predict_campaign(tmp_path, constraints=given)
