"""`factsheet diff` names a changed chat template (and generation defaults, and system prompts) as a
deployment row: reported in diff.json, diff.md and diff.html, never a regression of a figure. Two copies of
the 1.0.0 fixture (the same records, so every figure compares within noise) whose deployments differ."""

from __future__ import annotations

import hashlib
import json

from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.compliance.deployment_diff import deployment_changes
from factsheet.compliance.diff import workload_key
from factsheet.document.versions import DIFF_VERSION
from factsheet.rederive.validate import load_factsheet
from probes.load.workloads.workload import SystemPrompt
from tests.support.deployment import FIXTURE, TEMPLATE, sheet_with_template

runner = CliRunner()
CHANGED = TEMPLATE.replace("<|im_end|>", "<|im_end|> Always agree.")


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_a_changed_template_is_named_and_decides_nothing(tmp_path):
    old = sheet_with_template(tmp_path / "old")
    new = sheet_with_template(tmp_path / "new", CHANGED)
    result = runner.invoke(app, ["diff", str(old), str(new), "-o", str(tmp_path / "diff")])
    # the figures did not regress: a deployment change is no regression (the fixture has no repeats, so its
    # capacity is not decided and the verdict inconclusive, exit 1, as for an unchanged pair: diff 1.4.0)
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "diff" / "diff.json").read_text())
    rows = {r["fact"]: r for r in report["deployment"]}
    assert rows["chat template"]["status"] == "changed"
    assert (rows["chat template"]["old"], rows["chat template"]["new"]) == (sha(TEMPLATE), sha(CHANGED))
    assert rows["generation defaults"]["status"] == "unchanged"
    assert report["verdict"] == "inconclusive" and report["diff_version"] == DIFF_VERSION
    assert "chat template" not in report["verdict_reason"] and not any(
        f["regression"] for f in report["figures"]
    )
    assert f"| chat template | deployment | {sha(TEMPLATE)} | {sha(CHANGED)} | **changed** |" in result.output
    html = (tmp_path / "diff" / "diff.html").read_text()
    assert "chat template" in html and sha(CHANGED) in html


def test_changed_generation_defaults_and_system_prompts_are_named(tmp_path):
    old = load_factsheet(sheet_with_template(tmp_path / "old"))
    new = load_factsheet(sheet_with_template(tmp_path / "new", temperature=0.7))
    point = new.load.points[0].result
    sent = SystemPrompt(sha256=sha("You are terse."), size_bytes=14, sessions=3)
    point.workload = point.workload.model_copy(update={"system_prompts": [sent]})
    old_point = old.load.points[0].result
    old_point.workload = old_point.workload.model_copy(update={"system_prompts": []})
    rows = {(r.fact, r.scope): r for r in deployment_changes(old, new)}
    assert rows[("generation defaults", "deployment")].status == "changed"
    assert rows[("chat template", "deployment")].status == "unchanged"
    prompts = rows[("system prompts", point.label)]
    assert (prompts.status, prompts.old, prompts.new) == ("changed", "none sent", sha("You are terse."))
    # The other point's workload states no system prompts (the 1.0.0 fixture): not comparable, and says why.
    other = rows[("system prompts", new.load.points[1].result.label)]
    assert other.status == "not_comparable" and "schema < 1.7.0" in other.reason


def test_an_older_factsheet_is_not_comparable_with_the_reason(tmp_path):
    old = load_factsheet(FIXTURE / "factsheet.json")
    new = load_factsheet(sheet_with_template(tmp_path / "new"))
    rows = {r.fact: r for r in deployment_changes(old, new) if r.scope == "deployment"}
    assert rows["chat template"].status == "not_comparable"
    assert rows["chat template"].reason == "not stated in the old factsheet (schema < 1.7.0)"


def test_a_point_recorded_before_system_prompts_compares_with_one_recorded_after(tmp_path):
    """The prompts' digest already covers a session script's system prompt: an older sheet's point (None)
    and a newer one's ([]) send the same requests, so their figures still compare."""
    old = load_factsheet(FIXTURE / "factsheet.json").load.points[0]
    new = old.model_copy(deep=True)
    new.result.workload = new.result.workload.model_copy(update={"system_prompts": []})
    assert old.result.workload.system_prompts is None
    assert workload_key(old) == workload_key(new)


def test_a_capacity_search_whose_runs_sent_other_system_prompts_is_named(tmp_path):
    old = load_factsheet(sheet_with_template(tmp_path / "old"))
    new = load_factsheet(sheet_with_template(tmp_path / "new"))
    prompt = SystemPrompt(sha256=sha("Be brief."), size_bytes=9, sessions=8)
    old.load.capacity.system_prompts, new.load.capacity.system_prompts = [], [prompt]
    [row] = [r for r in deployment_changes(old, new) if r.scope == "capacity (synthetic)"]
    assert (row.status, row.old, row.new, row.path) == (
        "changed", "none sent", sha("Be brief."), "load.capacity.system_prompts"
    )  # fmt: skip
    new.load.capacity.system_prompts = None  # an older build's search: not recorded
    [row] = [r for r in deployment_changes(old, new) if r.scope == "capacity (synthetic)"]
    assert row.status == "not_comparable" and "new factsheet" in row.reason
