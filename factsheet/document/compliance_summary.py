"""The compliance summary a factsheet carries when its build ran a gate (imported by factsheet.document.schema)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from factsheet.document.files import COMPLIANCE_JSON
from probes.core.measurement import Model

Outcome = Literal["pass", "fail", "insufficient_evidence", "not_measured", "not_applicable"]
OUTCOMES: tuple[Outcome, ...] = ("pass", "fail", "insufficient_evidence", "not_measured", "not_applicable")


class PolicyId(Model):
    id: str
    version: str
    title: str
    sha256: str = Field(description="digest of the policy as applied (profile, overrides and parameters)")


class GateFinding(Model):
    policy: str
    rule: str
    title: str
    severity: Literal["error", "warning"]
    outcome: Outcome
    reason: str


class ComplianceSummary(Model):
    """The verdict of the policies run at the end of the build; the full report is compliance.json."""

    verdict: Literal["pass", "fail"]
    policies: list[PolicyId]
    counts: dict[str, int] = Field(description="rules per outcome")
    allow_insufficient: bool = Field(description="insufficient evidence on error rules was downgraded")
    findings: list[GateFinding] = Field(description="every rule that did not pass, gating ones first")
    report: str = Field(COMPLIANCE_JSON, description="the full report, relative to the factsheet")
