"""Decisions on re-derived figures only (issue 20, items 1-2): `check` and `diff` re-derive every figure from
its raw records before deciding anything on it, and `validate` re-runs the policies a compliance summary
names. A hostile author edits factsheet.json (and compliance.json), never the records' figures' truth."""

from __future__ import annotations

import json
import shutil

import pytest

from factsheet.cli.commands import app
from tests.hostile.decisions_builds import (
    GOODPUT,
    NO_SLO_POLICY,
    PASS_AT_1,
    RECORDS_POLICY,
    check,
    copy_fixture,
    diff,
    edit,
    forge_pass,
    gated_builds_fixture,  # noqa: F401 (the fixture `gated_builds`)
    made_up,
    runner,
    validate,
    write_policy,
)

pytestmark = pytest.mark.system

NOT_SUPPORTED = "not supported by its records"


# --- check -------------------------------------------------------------------------------------------


def test_policy_without_the_slo_rule_does_not_pass_made_up_figures(tmp_path):
    """Goodput 1000 req/s and pass@1 100 % written over what the records give (~11 req/s, 0 of 3 tasks):
    floors on them would pass on the stated values; they fail, and so does the built-in integrity check."""
    sheet = made_up(tmp_path / "sheet")
    result, report = check(sheet, write_policy(tmp_path, NO_SLO_POLICY), tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert report["verdict"] == "fail"
    by_rule = {r["rule"]: r for r in report["results"]}
    for rule, figure in (
        ("goodput-floor", "load.points[0].result.metrics.goodput"),
        ("pass-at-1-floor", "accuracy.result.pass_rates.plus.pass@1"),
    ):
        assert by_rule[rule]["outcome"] == "fail" and by_rule[rule]["gating"]
        assert by_rule[rule]["reason"].startswith(f"{NOT_SUPPORTED}: {figure}: stated 1"), by_rule[rule]
    integrity = by_rule["figures-rederive"]
    assert integrity["policy"] == "llm-factsheet" and integrity["outcome"] == "fail" and integrity["gating"]
    assert report["integrity"]["outcome"] == "fail"
    assert {d["figure"] for d in report["integrity"]["discrepancies"]} == {
        "load.points[0].result.metrics.goodput",
        "accuracy.result.pass_rates.base.pass@1",
        "accuracy.result.pass_rates.plus.pass@1",
    }
    assert "llm-factsheet/figures-rederive" in result.output


def test_raw_records_evidence_means_re_derived_not_only_digests(tmp_path):
    """The records are untouched (every digest matches): the raw-records check and a rule demanding raw
    records still fail, because the figure is not what the records give."""
    sheet = copy_fixture(tmp_path / "sheet")
    edit(sheet, GOODPUT, 50.0)
    result, report = check(sheet, write_policy(tmp_path, RECORDS_POLICY), tmp_path / "out")
    assert result.exit_code == 1, result.output
    by_rule = {r["rule"]: r for r in report["results"]}
    assert all(c["status"] == "verified" for c in by_rule["records"]["figures"][0]["records"])
    assert by_rule["records"]["outcome"] == "fail"
    assert "load.points[0].result.metrics.goodput: stated 50.0" in by_rule["records"]["reason"]
    assert by_rule["goodput-with-records"]["outcome"] == "fail"
    assert by_rule["goodput-with-records"]["reason"].startswith(NOT_SUPPORTED)


def test_a_rule_on_an_untouched_figure_still_decides_on_its_value(tmp_path):
    """Only the figures the records do not support lose their say: pass@1 made up leaves the goodput rule
    (same sheet, its figure untouched) decided on its value — here a fail on 11 req/s < 100."""
    sheet = copy_fixture(tmp_path / "sheet")
    edit(sheet, PASS_AT_1, 1.0)
    result, report = check(sheet, write_policy(tmp_path, NO_SLO_POLICY), tmp_path / "out")
    by_rule = {r["rule"]: r for r in report["results"]}
    assert by_rule["goodput-floor"]["outcome"] == "fail"
    assert "does not hold" in by_rule["goodput-floor"]["reason"]
    assert by_rule["pass-at-1-floor"]["reason"].startswith(NOT_SUPPORTED)
    assert result.exit_code == 1


def test_honest_fixture_keeps_its_outcomes(tmp_path):
    """The untouched fixture: the rules decide on the values (goodput 11 < 100 fails, pass@1 0 < 0.9 fails,
    as before), the integrity check passes and adds no result; a lenient policy passes (exit 0)."""
    sheet = copy_fixture(tmp_path / "sheet")
    result, report = check(sheet, write_policy(tmp_path, NO_SLO_POLICY), tmp_path / "strict")
    assert result.exit_code == 1
    assert {r["rule"]: r["outcome"] for r in report["results"]} == {
        "goodput-floor": "fail",
        "pass-at-1-floor": "fail",
    }
    assert all("does not hold" in r["reason"] for r in report["results"])
    assert report["integrity"]["outcome"] == "pass" and report["integrity"]["discrepancies"] == []
    lenient = NO_SLO_POLICY.replace("threshold: 100", "threshold: 1").replace(
        "threshold: 0.9", "threshold: 0"
    )
    result, report = check(sheet, write_policy(tmp_path / "l", lenient), tmp_path / "lenient")
    assert result.exit_code == 0, result.output
    assert report["verdict"] == "pass" and report["counts"]["pass"] == 2
    result, report = check(sheet, write_policy(tmp_path / "r", RECORDS_POLICY), tmp_path / "records")
    assert result.exit_code == 0, result.output


# --- diff --------------------------------------------------------------------------------------------


def test_diff_against_a_candidate_without_records_is_not_no_regression(tmp_path):
    """Its records missing, nothing of the candidate is vouched for: every row not comparable, and the
    verdict says whose records are missing (diff 1.4.0; was `inconclusive`, "nothing was comparable")."""
    base = copy_fixture(tmp_path / "base")
    bare = copy_fixture(tmp_path / "bare")
    shutil.rmtree(bare.parent / "records")
    result, report = diff(base, bare, tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert report["verdict"] == "unsupported"
    assert all(f["status"] == "not_comparable" for f in report["figures"])
    assert report["verdict_reason"].startswith(f"the candidate's figures are {NOT_SUPPORTED}")
    assert "missing" in report["verdict_reason"]
    md = (tmp_path / "out" / "diff.md").read_text()
    assert "No regression" not in md and "**Not supported**" in md
    assert "Not supported" in (tmp_path / "out" / "diff.html").read_text()


@pytest.mark.parametrize(
    ("path", "value"),
    [(GOODPUT, 999.0), ("load/points/1/result/metrics/e2el_ms/percentiles/p99", 1.0)],
)
def test_diff_against_a_forged_baseline_is_refused(tmp_path, path, value):
    """Issue 42: one figure of the *old* factsheet edited (records untouched) made every row resting on it
    not comparable and the verdict "No regression", exit 0 ("0 of 21 figure(s) compared"), whatever the
    candidate. The baseline is held to its records as the candidate is: `unsupported`, exit 1, one line
    naming the forged figure."""
    old = copy_fixture(tmp_path / "old")
    edit(old, path, value)
    result, report = diff(old, copy_fixture(tmp_path / "new"), tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert report["verdict"] == "unsupported" and report["new_unsupported"] == []
    figure = path.replace("/", ".").replace(".0.", "[0].").replace(".1.", "[1].")
    assert report["verdict_reason"].startswith(f"the baseline's figures are {NOT_SUPPORTED}: {figure}")
    assert {d["figure"] for d in report["old_unsupported"]} >= {figure}
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("check failed: the baseline's figures") and figure in last


def test_diff_against_a_candidate_with_an_altered_figure_fails(tmp_path):
    """Goodput and pass@1 made up in the candidate: its rows on them are not comparable (with the reason),
    the verdict says the candidate's figures are not supported, exit 1."""
    base = copy_fixture(tmp_path / "base")
    result, report = diff(base, made_up(tmp_path / "cand"), tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert report["verdict"] == "unsupported"
    rows = {(f["figure"], f["scope"]): f for f in report["figures"]}
    for key in (("goodput", "concurrency=1"), ("pass@1", "accuracy")):
        assert rows[key]["status"] == "not_comparable", rows[key]
        assert rows[key]["reason"].startswith(f"new factsheet: {NOT_SUPPORTED}"), rows[key]
    assert rows[("goodput", "rate=20/s (burstiness=1)")]["status"] == "compared"  # the other point is sound
    assert {d["figure"] for d in report["new_unsupported"]} >= {"load.points[0].result.metrics.goodput"}
    assert "No regression" not in (tmp_path / "out" / "diff.md").read_text()


def test_diff_of_honest_sheets_without_repeats_decides_nothing(tmp_path):
    """Two copies of one honest build without repeats: every row that decides either rests on one run's own
    noise (capacity: not decided, no between-run noise) or was not compared (the fixture's search has no
    confirmed answer), so the verdict is inconclusive, never "no regression" (issue 41 item 1, 42 item 1:
    was no_regression, exit 0, on 1 compared row of 12). The policy's on_inconclusive chooses the exit code,
    and the report says which applied."""
    result, report = diff(copy_fixture(tmp_path / "a"), copy_fixture(tmp_path / "b"), tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert report["verdict"] == "inconclusive" and report["new_unsupported"] == []
    assert (report["gate"], report["on_inconclusive"], report["on_inconclusive_source"]) == (
        "fail", "fail", "default",
    )  # fmt: skip
    cap = next(f for f in report["figures"] if f["figure"] == "capacity_at_slo")
    assert (
        cap["status"] == "compared" and cap["not_decided"] == "no between-run noise" and not cap["regression"]
    )
    assert "not decided, no between-run noise: capacity_at_slo" in report["verdict_reason"]
    assert "not compared: ttft_ms.p99 (capacity (synthetic) confirmation)" in report["verdict_reason"]
    # pass@1's noise is binomial over a fixed task set, which bounds a rebuild's: it decides
    acc = next(f for f in report["figures"] if f["figure"] == "pass@1")
    assert acc["status"] == "compared" and acc["between_run"] and acc["not_decided"] is None
    # Issue 28: a percentile is compared only where both sides' samples support it (p99: 459, p50: 7), a
    # confirmation run's figures only where both answers were confirmed; the fixture's small runs have neither.
    allowed = ("too few samples", "no confirmed answer")
    assert all(f["status"] == "compared" or f["reason"].startswith(allowed) for f in report["figures"])
    md = (tmp_path / "out" / "diff.md").read_text()
    assert "Gate: **fail** (inconclusive, and on\\_inconclusive is fail (default))" in md
    lenient = write_policy(
        tmp_path, "policy_version: 1\nid: lenient\ntitle: t\nversion: '1'\non_inconclusive: pass\n"
    )
    result = runner.invoke(app, ["diff", str(tmp_path / "a" / "factsheet.json"), str(tmp_path / "b" / "factsheet.json"),
                                 "-p", str(lenient), "-o", str(tmp_path / "lenient")])  # fmt: skip
    report = json.loads((tmp_path / "lenient" / "diff.json").read_text())
    assert result.exit_code == 0, result.output
    assert report["verdict"] == "inconclusive" and report["gate"] == "pass"
    assert report["on_inconclusive_source"] == "policy lenient"
    assert "Gate: **pass** (inconclusive, and on\\_inconclusive is pass (policy lenient))" in result.output


# --- validate: the compliance summary re-checked -----------------------------------------------------


def test_honest_gated_builds_validate(gated_builds):
    for name, sheet in gated_builds.items():
        result = validate(sheet)
        assert result.exit_code == 0, f"{name}: {result.output}"
        report = json.loads((sheet.parent / "compliance.json").read_text())
        assert report["report_version"] == "1.1.0" and report["policies"][0]["rules"]


def test_forged_pass_verdict_is_caught_by_validate(gated_builds, tmp_path):
    """The gate failed at build time; `pass` written into the factsheet's summary (counts and findings to
    match) gives exit 1 naming compliance.verdict."""
    shutil.copytree(gated_builds["fail"].parent, tmp_path / "sheet")
    sheet = tmp_path / "sheet" / "factsheet.json"
    forge_pass(sheet)
    result = validate(sheet)
    assert result.exit_code == 1, result.output
    assert "compliance.verdict: stated 'pass', recomputed 'fail'" in result.output


def test_forged_pass_with_the_report_rewritten_is_caught(gated_builds, tmp_path):
    """The forger also rewrites compliance.json to say pass: the verdict is re-run, not read from it."""
    shutil.copytree(gated_builds["fail"].parent, tmp_path / "sheet")
    sheet = tmp_path / "sheet" / "factsheet.json"
    forge_pass(sheet)
    path = sheet.parent / "compliance.json"
    report = json.loads(path.read_text())
    report["verdict"] = "pass"
    for r in report["results"]:
        r["outcome"], r["gating"] = "pass", False
    path.write_text(json.dumps(report))
    result = validate(sheet)
    assert result.exit_code == 1 and "compliance.verdict" in result.output, result.output


def test_report_alone_rewritten_to_pass_is_caught(gated_builds, tmp_path):
    """The factsheet untouched (it says fail); compliance.json rewritten to say pass for the same policies:
    the build's own report is held to the same re-run, exit 1 naming compliance.report.verdict."""
    shutil.copytree(gated_builds["fail"].parent, tmp_path / "sheet")
    sheet = tmp_path / "sheet" / "factsheet.json"
    path = sheet.parent / "compliance.json"
    report = json.loads(path.read_text())
    report["verdict"] = "pass"
    for r in report["results"]:
        r["outcome"], r["gating"] = "pass", False
    report["counts"] = {k: (len(report["results"]) if k == "pass" else 0) for k in report["counts"]}
    path.write_text(json.dumps(report))
    result = validate(sheet)
    assert result.exit_code == 1, result.output
    assert "compliance.report.verdict: stated 'pass', recomputed 'fail'" in result.output


def test_rules_swapped_in_the_report_are_caught_by_their_digest(gated_builds, tmp_path):
    """An easier policy put into compliance.json (threshold raised to pass): its digest no longer matches
    the one the summary names."""
    shutil.copytree(gated_builds["fail"].parent, tmp_path / "sheet")
    sheet = tmp_path / "sheet" / "factsheet.json"
    forge_pass(sheet)
    path = sheet.parent / "compliance.json"
    report = json.loads(path.read_text())
    report["policies"][0]["rules"][0]["threshold"] = 100000
    path.write_text(json.dumps(report))
    result = validate(sheet)
    assert result.exit_code == 1 and "compliance.policies[0].sha256" in result.output, result.output


def test_missing_report_is_a_discrepancy(gated_builds, tmp_path):
    shutil.copytree(gated_builds["pass"].parent, tmp_path / "sheet")
    (tmp_path / "sheet" / "compliance.json").unlink()
    result = validate(tmp_path / "sheet" / "factsheet.json")
    assert result.exit_code == 1 and "compliance.report" in result.output, result.output


def test_report_outside_the_folder_is_not_read(gated_builds, tmp_path):
    shutil.copytree(gated_builds["pass"].parent, tmp_path / "sheet")
    sheet = tmp_path / "sheet" / "factsheet.json"
    shutil.copy(sheet.parent / "compliance.json", tmp_path / "elsewhere.json")
    edit(sheet, "compliance/report", "../elsewhere.json")
    result = validate(sheet)
    # refused before it is opened, like every path a factsheet names (bad input: exit 2, one line)
    assert result.exit_code == 2 and "leads out of" in result.output, result.output


def test_page_one_states_the_verdict_as_the_builds(gated_builds):
    """Rendering re-runs nothing: page 1 says whose verdict it is and where the report is."""
    from factsheet.rederive.validate import load_factsheet
    from factsheet.render.glance import glance_rows

    row = next(r for r in glance_rows(load_factsheet(gated_builds["pass"])) if r.label == "Compliance")
    assert row.value == "PASS (build's gate)"
    assert "not re-checked here" in row.detail and "compliance.json" in row.detail
    assert "factsheet validate" in row.detail


def test_a_built_in_profile_re_checks_without_the_builds_report(gated_builds, tmp_path):
    """`factsheet check` with other policies writes its report over the build's (its default folder): a
    gate that was a built-in profile is still re-run, from the profile as shipped (same digest)."""
    shutil.copytree(gated_builds["profile"].parent, tmp_path / "sheet")
    sheet = tmp_path / "sheet" / "factsheet.json"
    policy = write_policy(tmp_path, RECORDS_POLICY)
    result, report = check(sheet, policy, sheet.parent)
    assert [p["id"] for p in report["policies"]] == ["records"]
    result = validate(sheet)
    assert result.exit_code == 0, result.output


def test_a_made_up_condition_does_not_switch_a_rule_off(tmp_path):
    """`when:` on a made-up figure: the rule is not 'not applicable' on the forger's say-so."""
    sheet = copy_fixture(tmp_path / "sheet")
    edit(sheet, GOODPUT, 0.5)  # the records give ~11 req/s; the rule applies only above 5
    policy = """\
        policy_version: 1
        id: cond
        title: a floor that applies to fast points
        version: "1"
        rules:
          - id: pass-at-1-when-fast
            title: pass@1 at least 0.9 when goodput is above 5 req/s
            field: accuracy.result.pass_rates.plus.pass@1
            op: ">="
            threshold: 0.9
            when: {field: "load.points[0].result.metrics.goodput", op: ">", value: 5}
        """
    result, report = check(sheet, write_policy(tmp_path, policy), tmp_path / "out")
    rule = report["results"][0]
    assert rule["outcome"] == "fail" and rule["reason"].startswith(f"condition {NOT_SUPPORTED}"), rule
    assert result.exit_code == 1


def test_a_forged_figure_on_a_gated_sheet_is_named_first(gated_builds, tmp_path):
    """A figure the gate reads edited (every load point's p99 E2EL to 1 ms, records untouched): the summary's
    findings no longer match either, but `validate` names the figure first, then the summary (issue 42: it
    named the compliance summary alone)."""
    shutil.copytree(gated_builds["pass"].parent, tmp_path / "sheet")
    sheet = tmp_path / "sheet" / "factsheet.json"
    doc = json.loads(sheet.read_text())
    for p in doc["load"]["points"]:
        p["result"]["metrics"]["e2el_ms"]["percentiles"]["p99"] = 1.0
    sheet.write_text(json.dumps(doc))
    result = validate(sheet)
    assert result.exit_code == 1, result.output
    first = result.output.split(": stated", 1)[0]
    assert first.endswith("result.metrics.e2el_ms.percentiles.p99"), result.output
    assert "compliance" in result.output  # the summary's findings, after the figure
