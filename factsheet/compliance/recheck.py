"""The factsheet's compliance summary, re-checked: the policies it names re-run on the sheet.

The summary (`compliance` in factsheet.json) states a verdict; anyone can write `pass` there. So `factsheet
validate` takes each named policy as applied from the build's report beside the factsheet (compliance.json,
which carries the rules; a built-in profile may also be loaded by name), checks its digest against
the one the summary names, runs them on the sheet as it was before the gate (compliance section removed,
records from its folder) and compares verdict, counts and findings. The rules themselves are what the build
applied: which policy was meant is attested (the signature covers compliance.json), not re-checked.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from factsheet.compliance.evaluate import evaluate
from factsheet.compliance.paths import check_path
from factsheet.compliance.policy import LoadedPolicy, PolicyError, Rule, load_policy, profile_names
from factsheet.compliance.report import ComplianceReport, PolicyApplied
from factsheet.document.compliance_summary import ComplianceSummary
from factsheet.document.schema import Factsheet
from factsheet.rederive import Discrepancy
from factsheet.rederive.compare import differences
from factsheet.untrusted.limits import MAX_COMPLIANCE_REPORT_BYTES, MAX_POLICIES, MAX_POLICY_RULES
from factsheet.untrusted.parsing import parse_json
from factsheet.untrusted.reading import read_confined
from probes.core.digests import sha256_bytes
from probes.core.errors import CheckFailed, InputError
from probes.core.measurement import NotMeasured


class ComplianceDiffers(CheckFailed):
    """The compliance summary is not what its policies give on this sheet (each difference named)."""

    def __init__(self, discrepancies: list[Discrepancy]):
        self.discrepancies = discrepancies
        super().__init__(
            "the compliance summary does not re-check: " + "; ".join(d.describe() for d in discrepancies)
        )


def rechecked(sheet: Factsheet, factsheet_json: Path) -> list[str]:
    """`factsheet validate`'s step: raise ComplianceDiffers on any discrepancy, else say what was re-run."""
    found = recheck(sheet, factsheet_json)
    if found:
        raise ComplianceDiffers(found)
    c = sheet.compliance
    if isinstance(c, NotMeasured):
        return []
    names = ", ".join(f"{p.id} {p.version}" for p in c.policies)
    return [f"compliance: {names} re-run on the sheet: verdict {c.verdict}, counts and findings as stated"]


def recheck(sheet: Factsheet, factsheet_json: Path) -> list[Discrepancy]:
    """Where the summary differs from its policies re-run on the sheet; empty when it holds (or states none)."""
    summary = sheet.compliance
    if isinstance(summary, NotMeasured):
        return []  # no verdict claimed
    folder = Path(factsheet_json).parent
    report, problem = _read_report(folder, summary.report)
    if problem is not None:
        return [problem]
    policies, found = _policies(summary, report)
    if found:
        return found
    before = sheet.model_copy(
        update={"compliance": Factsheet.model_fields["compliance"].get_default(call_default_factory=True)}
    )
    try:
        again = evaluate(
            before,
            policies,
            folder=folder,
            factsheet_path=str(factsheet_json),
            factsheet_sha256="",
            allow_insufficient=summary.allow_insufficient,
        ).summary()
    except InputError as exc:  # a rule the report carries that cannot be applied to this sheet
        return [_nd("compliance.policies", "applicable to this sheet", f"cannot be applied: {exc}")]
    src = f"the policies in {summary.report}, re-run on the sheet and its records"
    keep = {"verdict", "counts", "findings"}
    recomputed = again.model_dump(mode="json", include=keep)
    found = differences(summary.model_dump(mode="json", include=keep), recomputed, "compliance", src)
    if _same_gate(summary, report):  # the build's own report: what it says is held to the same re-run
        stated = report.summary().model_dump(mode="json", include=keep)
        found += differences(stated, recomputed, "compliance.report", src)
    return found


def _same_gate(summary: ComplianceSummary, report: ComplianceReport) -> bool:
    """The report is the gate's (same policies and digests, same flag), not one `factsheet check` wrote over it
    with other policies."""
    ids = [(p.id, p.sha256) for p in summary.policies]
    return ids == [(p.id, p.sha256) for p in report.policies] and (
        summary.allow_insufficient == report.allow_insufficient
    )


def _nd(figure: str, stated, recomputed) -> Discrepancy:
    return Discrepancy(figure=figure, stated=stated, recomputed=recomputed)


def _read_report(folder: Path, name: str) -> tuple[ComplianceReport | None, Discrepancy | None]:
    """The report the summary names: confined to the factsheet's folder and bounded like every file a
    factsheet names (a path out of the folder, a link out, a FIFO: refused, exit 2); absent or not a report:
    the verdict cannot be re-checked (exit 1, naming it)."""
    figure = "compliance.report"
    try:
        data = read_confined(folder, name, MAX_COMPLIANCE_REPORT_BYTES, "compliance report")
    except OSError:
        return None, _nd(figure, name, "missing: the verdict cannot be re-checked")
    try:
        return ComplianceReport.model_validate(parse_json(data, f"compliance report {name}")), None
    except ValidationError as exc:
        return None, _nd(figure, name, f"not a compliance report: {exc.errors()[0]['msg']}")


def _policies(
    summary: ComplianceSummary, report: ComplianceReport
) -> tuple[list[LoadedPolicy], list[Discrepancy]]:
    """Each policy the summary names, as applied, its digest checked; or why it cannot be had."""
    by_id = {p.id: p for p in report.policies}
    policies, found = [], []
    for i, named in enumerate(summary.policies):
        where = f"compliance.policies[{i}]"
        applied = by_id.get(named.id)
        if applied is None or applied.rules is None:
            # A built-in profile applied as it ships needs no copy of its rules (an older report kept
            # none; `factsheet check` with other policies may have replaced the build's report).
            profile = builtin_profile(named.id)
            if profile is not None and profile.sha256 == named.sha256:
                policies.append(profile)
                continue
            why = (
                f"no such policy in {summary.report}"
                if applied is None
                else f"{summary.report} (report {report.report_version}) does not carry its rules"
            )
            found.append(
                _nd(f"{where}.sha256", named.sha256, f"the policy as applied is not available: {why}")
            )
            continue
        digest = rules_digest(applied.rules)
        if digest != named.sha256:
            found.append(_nd(f"{where}.sha256", named.sha256, f"{digest} (the rules in {summary.report})"))
            continue
        bad = bad_rule_path(applied.rules)
        if bad is not None:  # the same check a policy gets when it is loaded, before any rule runs
            found.append(_nd(f"{where}.rules", "paths of the factsheet schema", bad))
            continue
        for key in ("version", "title"):
            if getattr(applied, key) != getattr(named, key):
                found.append(_nd(f"{where}.{key}", getattr(named, key), getattr(applied, key)))
        policies.append(as_loaded(applied, applied.rules))
    # The bounds `factsheet check` holds a policy file to, so re-running them costs what checking did.
    if len(summary.policies) > MAX_POLICIES or any(len(p.rules) > MAX_POLICY_RULES for p in policies):
        found.append(
            _nd(
                "compliance.policies",
                "rules to re-run",
                f"more than {MAX_POLICIES} policies or {MAX_POLICY_RULES} rules in one",
            )
        )
    return policies, found


def bad_rule_path(rules: list[Rule]) -> str | None:
    for rule in rules:
        for path in rule.paths():
            try:
                check_path(path)
            except InputError as exc:
                return f"rules.{rule.id}: {exc}"
    return None


def builtin_profile(name: str) -> LoadedPolicy | None:
    if name not in profile_names():
        return None
    try:
        return load_policy(name)
    except PolicyError:
        return None


def as_loaded(applied: PolicyApplied, rules: list[Rule]) -> LoadedPolicy:
    return LoadedPolicy(**applied.model_dump(exclude={"rules"}), max_regression={}, rules=rules)


def rules_digest(rules: list[Rule]) -> str:
    """The digest a policy as applied is named by (the same as `policy.load_policy` gives)."""
    data = json.dumps([r.model_dump(mode="json") for r in rules], sort_keys=True).encode()
    return sha256_bytes(data)
