"""A compliance report's verdict in the vocabulary of in-toto's Test Result predicate: what the gate prints
and what an attestation carries, one reading of the report for both."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from probes.core.measurement import Model


class ComplianceVerdict(Model):
    """A policy check's outcome in the vocabulary of in-toto's Test Result predicate."""

    policy: str = Field(description="policy name or file the factsheet was checked against")
    policy_sha256: str | None = Field(None, description="digest of the policy file, 'sha256:...'")
    result: Literal["PASSED", "WARNED", "FAILED"]
    report_sha256: str | None = Field(None, description="digest of the report file the verdict was read from")
    passed_tests: list[str] = Field(default_factory=list)
    warned_tests: list[str] = Field(default_factory=list)
    failed_tests: list[str] = Field(default_factory=list)


def verdict_of_report(report: dict) -> ComplianceVerdict:
    """The verdict of a compliance report (`factsheet check`'s compliance.json: `verdict` pass/fail and
    per-rule `results`) in Test Result terms: FAILED when the gate fails, WARNED when it passes with
    rules not passed, else PASSED; rules named policy/rule."""
    results = report.get("results", [])
    name = [f"{r.get('policy')}/{r.get('rule')}" for r in results]
    passed = [n for n, r in zip(name, results, strict=True) if r.get("outcome") == "pass"]
    failed = [n for n, r in zip(name, results, strict=True) if r.get("gating")]
    warned = [n for n, r in zip(name, results, strict=True) if n not in passed and n not in failed]
    policies = report.get("policies", [])
    verdict = report.get("verdict")
    if verdict not in ("pass", "fail"):
        raise ValueError(f"verdict is {verdict!r}, not pass or fail")
    return ComplianceVerdict(
        policy=", ".join(f"{p.get('id')} {p.get('version', '')}".strip() for p in policies)
        or "unnamed policy",
        policy_sha256=policies[0].get("sha256") if len(policies) == 1 else None,
        result="FAILED" if verdict == "fail" else "WARNED" if warned else "PASSED",
        passed_tests=passed,
        warned_tests=warned,
        failed_tests=failed,
    )
