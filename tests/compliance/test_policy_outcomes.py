"""Each of the five outcomes, reached on a real factsheet built against the mock server; the JUnit file
read back with a JUnit reader; the gate's exit codes, with and without --allow-insufficient."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from factsheet.cli.commands import app
from tests.support.compliance_builds import MIN_E2EL_MS, runner

# One worker: the folder's one 480-request build (conftest `sheet_dir`) made once (tests/conftest.py).
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("compliance-sheet")]

P99 = "load.points[concurrency={c}].result.metrics.e2el_ms.percentiles.p99"
STRICT = "{measured: true, sufficient_samples: true, confidence: 0.95, raw_records: true}"

OUTCOMES_POLICY = f"""\
    policy_version: 1
    id: outcomes
    title: one rule per outcome
    version: "1"
    rules:
      - id: p99-generous
        title: p99 E2EL at 16 users within 5 s, on enough samples and the CI
        field: {P99.format(c=16)}
        op: "<="
        threshold: 5000
        unit: ms
        evidence: {STRICT}
      - id: p99-impossible
        title: p99 E2EL at 16 users below what the mock can serve
        field: {P99.format(c=16)}
        op: "<="
        threshold: {MIN_E2EL_MS - 15}
        unit: ms
        evidence: {STRICT}
      - id: p99-few-samples
        title: p99 E2EL at 1 user within 5 s (8 samples)
        field: {P99.format(c=1)}
        op: "<="
        threshold: 5000
        unit: ms
        evidence: {{sufficient_samples: true}}
      - id: pass-at-1
        title: pass@1 at least 0.1
        field: accuracy.result.pass_rates.base.pass@1
        op: ">="
        threshold: 0.1
      - id: vllm-only
        title: engine version recorded (vLLM targets)
        field: system.engine.version
        op: exists
        when: {{field: system.target_kind, op: "==", value: vllm}}
      - id: training-data
        title: training data described
        outside_factsheet: training data of the model
        severity: warning
    """

EXPECTED = {
    "p99-generous": "pass",
    "p99-impossible": "fail",
    "p99-few-samples": "insufficient_evidence",
    "pass-at-1": "not_measured",
    "vllm-only": "not_applicable",
    "training-data": "not_applicable",
}


@pytest.fixture(scope="module")
def checked(sheet_dir, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("check")
    policy = tmp / "outcomes.yaml"
    policy.write_text(__import__("textwrap").dedent(OUTCOMES_POLICY))
    out, junit = tmp / "report", tmp / "junit.xml"
    result = runner.invoke(
        app,
        [
            "check",
            str(sheet_dir / "factsheet.json"),
            "-p",
            str(policy),
            "-o",
            str(out),
            "--junit",
            str(junit),
        ],
    )
    return result, out, junit


def test_each_outcome_reached(checked):
    result, out, _ = checked
    report = json.loads((out / "compliance.json").read_text())
    assert {r["rule"]: r["outcome"] for r in report["results"]} == EXPECTED
    assert result.exit_code == 1, result.output  # the failing and the insufficient error rules gate
    assert report["verdict"] == "fail"
    for name in ("compliance.html", "compliance.pdf"):
        assert (out / name).stat().st_size > 0


def test_outcomes_name_their_figures(checked):
    _, out, _ = checked
    by_rule = {r["rule"]: r for r in json.loads((out / "compliance.json").read_text())["results"]}
    passed = by_rule["p99-generous"]["figures"][0]
    assert passed["n"] == 480 and passed["value"] >= MIN_E2EL_MS
    assert passed["ci"]["upper"] <= 5000 and passed["ci"]["confidence"] == 0.95
    assert passed["sufficiency"]["sufficient"] and passed["sufficiency"]["n_required"] == 459
    assert passed["records"][0]["status"] == "verified"
    failed = by_rule["p99-impossible"]["figures"][0]
    assert failed["ci"]["lower"] > MIN_E2EL_MS - 15  # decided on the whole interval, not the point
    few = by_rule["p99-few-samples"]
    assert few["figures"][0]["sufficiency"]["n"] == 8 and "459" in few["reason"]
    assert "not requested in the build spec" in by_rule["pass-at-1"]["reason"]  # the factsheet's own reason
    assert "applies only when system.target_kind == 'vllm'" in by_rule["vllm-only"]["reason"]


def test_junit_one_testcase_per_rule(checked):
    _, _, junit = checked
    xml = JUnitXml.fromfile(str(junit))
    cases = {c.name.split(":")[0]: c for suite in xml for c in suite}
    assert set(cases) == set(EXPECTED)
    assert cases["p99-generous"].is_passed
    assert isinstance(cases["p99-impossible"].result[0], Failure)
    assert isinstance(cases["p99-few-samples"].result[0], Error)
    assert isinstance(cases["pass-at-1"].result[0], Error)
    assert isinstance(cases["vllm-only"].result[0], Skipped)
    # A plain XML reader sees what CI servers count.
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "6",
        "1",
        "2",
        "2",
    )


def test_allow_insufficient_downgrades_and_says_so(sheet_dir, policy_file, tmp_path):
    policy = policy_file(
        f"""\
        policy_version: 1
        id: few
        title: few samples
        version: "1"
        rules:
          - id: p99-few-samples
            title: p99 E2EL at 1 user within 5 s
            field: {P99.format(c=1)}
            op: "<="
            threshold: 5000
            evidence: {{sufficient_samples: true}}
        """
    )
    args = ["check", str(sheet_dir / "factsheet.json"), "-p", str(policy)]
    strict = runner.invoke(app, [*args, "-o", str(tmp_path / "strict")])
    assert strict.exit_code == 1, strict.output
    lenient = runner.invoke(app, [*args, "-o", str(tmp_path / "lenient"), "--allow-insufficient"])
    assert lenient.exit_code == 0, lenient.output
    report = json.loads((tmp_path / "lenient" / "compliance.json").read_text())
    assert report["allow_insufficient"] is True and report["results"][0]["downgraded"] is True
    assert "--allow-insufficient was used" in (tmp_path / "lenient" / "compliance.html").read_text()


def test_profile_override_applies_and_is_reported(sheet_dir, policy_file, tmp_path):
    policy = policy_file(
        """\
        policy_version: 1
        id: my-release
        title: my release gate
        version: "1"
        extends: release-gate
        overrides: {goodput_floor_rps: 100000.0, load_point: "concurrency=16"}
        disable: [pass-at-1-floor, clean-tree]
        """
    )
    result = runner.invoke(
        app, ["check", str(sheet_dir / "factsheet.json"), "-p", str(policy), "-o", str(tmp_path)]
    )
    report = json.loads((tmp_path / "compliance.json").read_text())
    by_rule = {r["rule"]: r for r in report["results"]}
    assert by_rule["goodput-floor"]["outcome"] == "fail"  # no mock serves 100,000 req/s
    assert by_rule["slo-p99"]["outcome"] == "pass"  # 480 samples at concurrency=16, 5 s SLO
    assert by_rule["raw-records"]["outcome"] == "pass"
    assert by_rule["pass-at-1-floor"]["outcome"] == "not_applicable"
    params = {p["name"]: p for p in report["policies"][0]["parameters"]}
    assert (
        params["goodput_floor_rps"]["value"] == 100000.0
        and "overridden in" in params["goodput_floor_rps"]["source"]
    )
    assert params["max_failed_share"]["source"].startswith("default in built-in profile release-gate")
    assert result.exit_code == 1


def test_altered_records_fail_the_records_rule(sheet_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(sheet_dir, copy)
    path = copy / "records" / "load-02.jsonl"
    data = bytearray(path.read_bytes())
    data[10] ^= 1
    path.write_bytes(bytes(data))
    result = runner.invoke(
        app, ["check", str(copy / "factsheet.json"), "-p", "release-gate", "-o", str(tmp_path / "r")]
    )
    by_rule = {r["rule"]: r for r in json.loads((tmp_path / "r" / "compliance.json").read_text())["results"]}
    assert by_rule["raw-records"]["outcome"] == "fail" and "load-02.jsonl" in by_rule["raw-records"]["reason"]
    assert result.exit_code == 1


def test_factsheet_without_its_records_is_insufficient_evidence(sheet_dir, tmp_path):
    """The JSON alone: figures are there, but a claim demanding raw records or recounted samples cannot pass."""
    (tmp_path / "alone").mkdir()
    shutil.copy(sheet_dir / "factsheet.json", tmp_path / "alone" / "factsheet.json")
    result = runner.invoke(
        app,
        [
            "check",
            str(tmp_path / "alone" / "factsheet.json"),
            "-p",
            "release-gate",
            "-o",
            str(tmp_path / "r"),
        ],
    )
    by_rule = {r["rule"]: r for r in json.loads((tmp_path / "r" / "compliance.json").read_text())["results"]}
    assert by_rule["raw-records"]["outcome"] == "insufficient_evidence"
    assert by_rule["slo-p99"]["outcome"] == "insufficient_evidence"
    assert by_rule["slo-p99"]["figures"][0]["records"][0]["status"] == "missing"
    assert result.exit_code == 1
