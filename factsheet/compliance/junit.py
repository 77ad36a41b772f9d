"""JUnit XML of a compliance report (junitparser): one testsuite per policy, one testcase per rule.

A gating result is a <failure> (the figure fails the rule) or an <error> (insufficient evidence, not
measured: the check could not be carried out); anything that does not fail the gate — warnings, results
downgraded by --allow-insufficient, not applicable — is <skipped> with its reason, so CI shows it.
"""

from __future__ import annotations

import io

from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from factsheet.compliance.report import INTEGRITY_POLICY, ComplianceReport, RuleResult


def _case(r: RuleResult) -> TestCase:
    case = TestCase(name=f"{r.rule}: {r.title}", classname=r.policy, time=0.0)
    text = _details(r)
    if r.outcome == "pass":
        case.system_out = text
    elif r.gating and r.outcome == "fail":
        case.result = [Failure(r.reason, "fail")]
    elif r.gating:
        case.result = [Error(r.reason, r.outcome)]
    else:
        why = "allowed by --allow-insufficient" if r.downgraded else f"{r.severity}: does not fail the gate"
        case.result = [Skipped(f"{r.outcome.replace('_', ' ')} ({why}): {r.reason}", r.outcome)]
    if r.outcome != "pass":
        case.system_out = text
    return case


def _details(r: RuleResult) -> str:
    lines = [f"outcome: {r.outcome}", f"reason: {r.reason}"]
    for f in r.figures:
        ci = f" CI[{f.ci.lower}, {f.ci.upper}] @{f.ci.confidence}" if f.ci else ""
        lines.append(f"{f.role} {f.path} = {f.value!r} {f.unit or ''} n={f.n}{ci} ({f.status})")
    lines += [f"ref: {ref.source}, {ref.item}: {ref.text}" for ref in r.references]
    return "\n".join(lines)


def junit_bytes(report: ComplianceReport) -> bytes:
    xml = JUnitXml(name=f"compliance of {report.factsheet.name}")
    for policy in report.policies:
        suite = TestSuite(f"{policy.id} {policy.version}")
        suite.add_property("policy_sha256", policy.sha256)
        suite.add_property("allow_insufficient", str(report.allow_insufficient).lower())
        for r in report.results:
            if r.policy == policy.id:
                suite.add_testcase(_case(r))
        xml.add_testsuite(suite)
    builtin = [r for r in report.results if r.policy == INTEGRITY_POLICY]
    if builtin:  # only when it fails: an honest build's suites and counts stay as its policies make them
        suite = TestSuite(f"{INTEGRITY_POLICY} (built in)")
        for r in builtin:
            suite.add_testcase(_case(r))
        xml.add_testsuite(suite)
    buf = io.BytesIO()
    xml.write(buf, pretty=True)
    return buf.getvalue()
