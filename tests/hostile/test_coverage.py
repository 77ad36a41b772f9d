"""Every field of a factsheet is re-derived, re-checked or attested only: none is left unclassified, so a
field a future change adds fails here, naming it, until someone decides how validate vouches for it."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.rederive.coverage import CLASSES, classify, leaf_fields, unclassified

pytestmark = pytest.mark.system


def test_every_field_of_the_model_is_classified():
    assert len(leaf_fields()) > 500  # the walk reaches the leaves, not just the sections
    assert unclassified() == []


def test_a_new_field_would_be_named():
    assert classify("load.points[].result.something_new") is None
    assert classify("a_new_section.figure") is None


def _leaves(node, path=""):
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _leaves(value, f"{path}.{key}" if path else key)
    elif isinstance(node, list) and node:
        for value in node:
            yield from _leaves(value, f"{path}[]")
    else:
        yield path


def test_every_field_of_a_real_build_is_classified(full_build):  # noqa: F811
    doc = json.loads((full_build / "factsheet.json").read_text())
    leaves = set(_leaves(doc))
    assert [p for p in sorted(leaves) if classify(p) is None] == []
    assert classify("load.points[].result.metrics.goodput")[0] == "re-derived"
    assert classify("load.points[].result.point.concurrency")[0] == "re-derived"  # bound
    assert classify("compliance.verdict")[0] == "re-checked"
    assert classify("system.host.cpu_model")[0] == "attested only"
    assert classify("tuning.best")[0] == "attested only"
    assert classify("energy.carbon.intensity.g_per_kwh")[0] == "attested only"


def test_validate_explain_prints_the_three_classes(full_build):  # noqa: F811
    result = CliRunner().invoke(app, ["validate", str(full_build / "factsheet.json"), "--explain"])
    assert result.exit_code == 0, result.output
    for cls in CLASSES:
        assert re.search(rf"^{cls}:$", result.output, re.M), result.output
    assert "provenance: tool version" in result.output
