"""The compliance report (`compliance.json`): a versioned pydantic model whose JSON Schema is published."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from factsheet.compliance.evidence import RecordsCheck
from factsheet.compliance.policy import AppliedParameter, Evidence, Op, Reference, Rule, Scalar
from factsheet.document.compliance_summary import OUTCOMES, ComplianceSummary, GateFinding, Outcome, PolicyId
from factsheet.document.versions import REPORT_VERSION, ReportVersion
from factsheet.rederive import Discrepancy
from probes.core.measurement import Model
from probes.load.stats import SampleSufficiency

# The always-on check in every report, whatever the policies: a decision rests only on figures the raw
# records give. It is no policy's rule, so a policy cannot leave it out.
INTEGRITY_POLICY = "llm-factsheet"
INTEGRITY_RULE = "figures-rederive"
INTEGRITY_TITLE = "every figure re-derives from its raw records"
DISCLAIMER = (
    "This report maps requirements to evidence in one factsheet. It is a cross-reference for reviewers, "
    "not a claim of conformity with any regulation or framework."
)


class Interval(Model):
    lower: float | None
    upper: float | None
    confidence: float
    method: str


class Figure(Model):
    """One figure that decided (or could not decide) a rule, with what it rests on."""

    path: str
    role: Literal["figure", "threshold", "denominator", "condition", "documents"] = "figure"
    value: Scalar | None = None
    unit: str | None = None
    n: int | None = Field(None, description="samples or trials the figure rests on")
    ci: Interval | None = None
    sufficiency: SampleSufficiency | None = None
    basis: Literal["measured", "estimated", "declared"] | None = None
    status: Literal["present", "not_measured", "missing"] = "present"
    note: str | None = None
    records: list[RecordsCheck] = Field(default_factory=list)


class RuleResult(Model):
    policy: str
    rule: str
    title: str
    description: str | None = None
    severity: Literal["error", "warning"]
    outcome: Outcome
    gating: bool = Field(description="this result fails the gate")
    downgraded: bool = Field(False, description="insufficient evidence on an error rule, allowed by the flag")
    reason: str = Field(description="which figures decided the outcome, in words")
    op: Op | None = None
    threshold: Scalar | None = None
    unit: str | None = None
    evidence_required: Evidence | None = None
    figures: list[Figure] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    section: str = Field(description="anchor of the factsheet section holding the evidence")


class FactsheetRef(Model):
    name: str
    path: str
    sha256: str
    schema_version: str


class PolicyApplied(Model):
    id: str
    title: str
    version: str
    description: str | None
    disclaimer: str | None
    source: str
    extends: list[str]
    sha256: str
    parameters: list[AppliedParameter]
    disabled: dict[str, str] = Field(
        default_factory=dict, description="rule id -> the policy that disabled it"
    )
    rules: list[Rule] | None = Field(
        None,
        description="the rules as applied (parameters substituted), whose digest is sha256 "
        "(absent in older reports)",
    )


class Integrity(Model):
    """The built-in check every report carries: each figure the raw records determine, re-derived."""

    policy: Literal["llm-factsheet"] = INTEGRITY_POLICY
    rule: Literal["figures-rederive"] = INTEGRITY_RULE
    outcome: Literal["pass", "fail"]
    reason: str
    records: list[RecordsCheck] = Field(description="every raw-records file the factsheet names")
    discrepancies: list[Discrepancy] = Field(
        description="figures the records contradict, and records missing or altered"
    )


class ComplianceReport(Model):
    report_version: ReportVersion = REPORT_VERSION
    kind: Literal["llm-factsheet-compliance"] = "llm-factsheet-compliance"
    factsheet: FactsheetRef
    policies: list[PolicyApplied]
    allow_insufficient: bool
    verdict: Literal["pass", "fail"]
    counts: dict[str, int]
    results: list[RuleResult]
    integrity: Integrity | None = Field(
        None,
        description="the built-in integrity check (a failure is also a gating result of policy "
        "'llm-factsheet'); absent when no records folder was given, and in older reports",
    )
    generated_at: str
    tool_version: str
    disclaimer: str = DISCLAIMER

    def summary(self) -> ComplianceSummary:
        not_passed = [r for r in self.results if r.outcome != "pass"]
        not_passed.sort(key=lambda r: (not r.gating, r.severity != "error"))
        return ComplianceSummary(
            verdict=self.verdict,
            policies=[
                PolicyId(id=p.id, version=p.version, title=p.title, sha256=p.sha256) for p in self.policies
            ],
            counts=self.counts,
            allow_insufficient=self.allow_insufficient,
            findings=[
                GateFinding(
                    policy=r.policy,
                    rule=r.rule,
                    title=r.title,
                    severity=r.severity,
                    outcome=r.outcome,
                    reason=r.reason,
                )
                for r in not_passed
            ],
        )


def count_outcomes(results: list[RuleResult]) -> dict[str, int]:
    return {o: sum(1 for r in results if r.outcome == o) for o in OUTCOMES}
