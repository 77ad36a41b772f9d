"""Malformed policies are bad input: one line naming the field or cause, exit 2, nothing written. And every
field a built-in profile names exists in the factsheet schema (a renamed field breaks this test first)."""

from __future__ import annotations

import pytest

from factsheet.cli.commands import app
from factsheet.compliance.paths import PathError, check_path, parse
from factsheet.compliance.policy import PolicyError, load_policy, profile_names
from tests.support.compliance_builds import runner

# One worker: the folder's one 480-request build (conftest `sheet_dir`) made once (tests/conftest.py).
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("compliance-sheet")]

HEAD = 'policy_version: 1\nid: bad\ntitle: bad\nversion: "1"\n'
RULE = "rules:\n  - {{id: r, title: r, field: '{field}', op: '<=', threshold: {threshold}}}\n"

MALFORMED = {
    "unknown field": (HEAD + "colour: blue\nrules: []\n", "colour"),
    "unknown rule field": (
        HEAD + "rules:\n  - {id: r, title: r, check: raw_records, severty: error}\n",
        "severty",
    ),
    "wrong type": (
        HEAD + RULE.format(field="load.capacity.result.capacity", threshold="[1, 2]"),
        "threshold",
    ),
    "unknown factsheet path": (
        HEAD + RULE.format(field="load.points[0].result.metrics.e2el_ms.percentilez.p99", threshold=1),
        "percentilez",
    ),
    "text threshold on an ordering": (
        HEAD + RULE.format(field="load.capacity.result.capacity", threshold="fast"),
        "numeric threshold",
    ),
    "not a mapping": ("- just\n- a list\n", "YAML mapping"),
    "empty file": ("", "YAML mapping"),
    "two kinds in one rule": (
        HEAD + "rules:\n  - {id: r, title: r, check: raw_records, outside_factsheet: x}\n",
        "exactly one",
    ),
    "unknown parameter": (
        HEAD + RULE.format(field="load.capacity.result.capacity", threshold="'${nope}'"),
        "nope",
    ),
    "override of nothing": (
        "policy_version: 1\nid: x\ntitle: x\nversion: '1'\nextends: release-gate\noverrides: {nope: 1}\n",
        "nope",
    ),
    "override of wrong type": (
        "policy_version: 1\nid: x\ntitle: x\nversion: '1'\nextends: release-gate\noverrides: {goodput_floor_rps: fast}\n",
        "goodput_floor_rps",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED), ids=str)
def test_malformed_policy_is_one_line_exit_2_nothing_written(case, sheet_dir, tmp_path):
    text, named = MALFORMED[case]
    policy = tmp_path / "policy.yaml"
    policy.write_text(text)
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["check", str(sheet_dir / "factsheet.json"), "-p", str(policy), "-o", str(out)]
    )
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert named in lines[0]
    assert not out.exists()


def test_binary_policy_is_bad_input(sheet_dir, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_bytes(bytes(range(256)) * 4)
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["check", str(sheet_dir / "factsheet.json"), "-p", str(policy), "-o", str(out)]
    )
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert not out.exists()


@pytest.mark.parametrize("name", profile_names())
def test_every_profile_field_exists_in_the_factsheet_schema(name):
    policy = load_policy(name)  # loading checks every path too; here each is checked on its own
    paths = [p for rule in policy.rules for p in rule.paths()]
    assert paths or name == "release-gate"
    for path in paths:
        check_path(path)
    assert all(rule.references for rule in policy.rules) or name == "release-gate"


def test_profiles_are_listed():
    assert set(profile_names()) >= {
        "release-gate",
        "eu-ai-act-technical-documentation",
        "nist-ai-rmf-measure",
    }
    result = runner.invoke(app, ["policies"])
    assert result.exit_code == 0 and "release-gate" in result.output
    shown = runner.invoke(app, ["policies", "eu-ai-act-technical-documentation"])
    assert (
        shown.exit_code == 0 and "Annex IV 2(g)" in shown.output and "Annex XI section 2, 1" in shown.output
    )


def test_eu_profile_cites_each_item_and_marks_what_lies_outside():
    policy = load_policy("eu-ai-act-technical-documentation")
    items = {ref.item for rule in policy.rules for ref in rule.references}
    assert items >= {
        "Annex IV 2(c)", "Annex IV 2(g)", "Annex IV 3", "Annex IV 4", "Annex IV 9",
        "Annex XI section 1, 1(d)", "Annex XI section 1, 2(d)", "Annex XI section 1, 2(e)", "Annex XI section 2, 1",
    }  # fmt: skip
    assert all(ref.source == "Regulation (EU) 2024/1689" for rule in policy.rules for ref in rule.references)
    assert any(r.outside_factsheet and "train" in r.outside_factsheet for r in policy.rules)
    nist = {ref.item for rule in load_policy("nist-ai-rmf-measure").rules for ref in rule.references}
    assert nist == {"MEASURE 2.1", "MEASURE 2.3", "MEASURE 2.12"}


def test_a_renamed_field_is_caught():
    with pytest.raises(PathError, match="percentilez"):
        check_path("load.points[headline].result.metrics.e2el_ms.percentilez.p99")
    with pytest.raises(PolicyError):
        load_policy("no-such-profile-or-file")


def test_selectors_may_hold_dots_and_spaces():
    segs = parse("load.points[rate=2.5/s (burstiness=1)].result.label")
    assert [str(s) for s in segs] == ["load", "points[rate=2.5/s (burstiness=1)]", "result", "label"]
    with pytest.raises(PathError):
        parse("load.points[0")
