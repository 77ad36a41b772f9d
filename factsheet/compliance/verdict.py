"""A compliance report's verdict in the vocabulary of in-toto's Test Result predicate: what the gate prints
and what an attestation carries, one reading of the report for both."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from factsheet.compliance.evaluate import evaluate
from factsheet.compliance.recheck import as_loaded, bad_rule_path, builtin_profile, rules_digest
from factsheet.compliance.report import ComplianceReport, PolicyApplied
from factsheet.document.schema import Factsheet
from factsheet.rederive.compare import differences
from factsheet.untrusted.limits import MAX_FACTSHEET_BYTES, MAX_POLICIES, MAX_POLICY_RULES
from factsheet.untrusted.reading import read_given
from probes.core.digests import sha256_bytes
from probes.core.errors import CheckFailed, InputError
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


class VerdictDiffers(CheckFailed):
    """A compliance verdict (a report given to `sign`, or one an attestation carries) that its policies, re-run
    on the sheet, do not give: a verdict is never signed, nor verified, on faith."""


def rerun(
    sheet: Factsheet,
    factsheet_json: Path,
    policies: list[PolicyApplied],
    allow_insufficient: bool,
    where: str,
) -> ComplianceReport:
    """The policies as applied, re-run on the sheet as it was before any gate (its compliance summary left
    out) and on the raw records beside `factsheet_json`. Each policy must carry its rules (or be a built-in
    profile, by digest); rules whose digest is not the policy's, or a policy named and versioned as a built-in
    profile whose rules are not the profile's, fail (VerdictDiffers, exit 1); rules that cannot be had are bad
    input (exit 2)."""
    if len(policies) > MAX_POLICIES:
        raise InputError(f"{where}: more than {MAX_POLICIES} policies")
    loaded = []
    for p in policies:
        profile = builtin_profile(p.id)
        if p.rules is None:
            if profile is None or profile.sha256 != p.sha256:
                raise InputError(
                    f"{where}: policy {p.id} {p.version} carries no rules, so its verdict cannot be re-run "
                    "(re-run factsheet check: its compliance.json carries them)"
                )
            loaded.append(profile)
            continue
        if len(p.rules) > MAX_POLICY_RULES:
            raise InputError(f"{where}: policy {p.id} has more than {MAX_POLICY_RULES} rules")
        if rules_digest(p.rules) != p.sha256:
            raise VerdictDiffers(
                f"{where}: policy {p.id} {p.version}: its rules are not the ones its digest names"
            )
        if profile is not None and profile.version == p.version and profile.sha256 != p.sha256:
            raise VerdictDiffers(
                f"{where}: policy {p.id} {p.version}: its rules are not the built-in profile's of that name"
            )
        bad = bad_rule_path(p.rules)
        if bad is not None:
            raise InputError(f"{where}: policy {p.id}: {bad}")
        loaded.append(as_loaded(p, p.rules))
    before = sheet.model_copy(
        update={"compliance": Factsheet.model_fields["compliance"].get_default(call_default_factory=True)}
    )
    return evaluate(
        before,
        loaded,
        folder=Path(factsheet_json).parent,
        factsheet_path=Path(factsheet_json).name,
        factsheet_sha256="",
        allow_insufficient=allow_insufficient,
    )


def rechecked_verdict(
    sheet: Factsheet, factsheet_json: Path, report: ComplianceReport, report_sha256: str | None, where: str
) -> tuple[ComplianceVerdict, ComplianceReport]:
    """The verdict `sign` carries: the report's policies re-run on this sheet (`rerun`), held to what the
    report states. A report of another factsheet (by digest), or one whose verdict, counts or findings the
    re-run does not give (edited to pass), fails with VerdictDiffers naming the difference."""
    digest = report.factsheet.sha256
    if digest and digest != sha256_bytes(read_given(Path(factsheet_json), MAX_FACTSHEET_BYTES, "factsheet")):
        raise VerdictDiffers(
            f"{where}: the report of another factsheet (its factsheet digest is not this one's)"
        )
    again = rerun(sheet, factsheet_json, report.policies, report.allow_insufficient, where)
    keep = {"verdict", "counts", "findings"}
    found = differences(
        report.summary().model_dump(mode="json", include=keep),
        again.summary().model_dump(mode="json", include=keep),
        "compliance",
        "its policies re-run on the sheet",
    )
    if found:
        raise VerdictDiffers(
            f"{where}: does not re-check on this sheet: " + "; ".join(d.describe() for d in found)
        )
    verdict = verdict_of_report(again.model_dump(mode="json"))
    return verdict.model_copy(update={"report_sha256": report_sha256}), again


def verdict_mismatch(signed: ComplianceVerdict, again: ComplianceVerdict) -> str | None:
    """What differs between a signed verdict and the one re-run now (its report digest aside), in words."""
    keys = ("policy", "policy_sha256", "result", "passed_tests", "warned_tests", "failed_tests")
    a, b = signed.model_dump(include=set(keys)), again.model_dump(include=set(keys))
    diff = [k for k in keys if a[k] != b[k]]
    if not diff:
        return None
    return ", ".join(f"{k} {a[k]!r} signed, {b[k]!r} re-run" for k in diff[:2])
