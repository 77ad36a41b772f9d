"""`check_factsheet`: a factsheet against policies (`factsheet check`), and the built-in policy profiles
(`factsheet policies`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from factsheet.api.results import Result
from factsheet.compliance.gate import gate_failure, run_check
from factsheet.compliance.policy import LoadedPolicy, PolicyError, load_policy, profile_names
from factsheet.compliance.report import ComplianceReport


class CheckResult(Result):
    """The compliance report and the files it was written to; `failure` names the rules failing the gate."""

    report: ComplianceReport

    @property
    def verdict(self) -> str:
        """'pass' or 'fail', the report's verdict."""
        return self.report.verdict


def check_factsheet(
    factsheet_json: Path,
    policies: Sequence[str],
    output: Path | None = None,
    *,
    junit: Path | None = None,
    allow_insufficient: bool = False,
) -> CheckResult:
    """Evaluate `policies` (policy files or built-in profile names) over the factsheet and the raw records
    beside it; write compliance.json/.html/.pdf and the JUnit XML into `output` (default: the factsheet's
    folder). A failed gate is the result's `failure` (exit 1); bad input raises `InputError`, nothing
    written."""
    report, written = run_check(
        Path(factsheet_json), list(policies), output, junit=junit, allow_insufficient=allow_insufficient
    )
    return CheckResult(report=report, written=tuple(written), failure=gate_failure(report))


class PolicyProfiles(Result):
    """Built-in policy profiles, loaded (all of them, or the one asked for)."""

    profiles: dict[str, LoadedPolicy] = Field(
        description="by profile name, in the order `factsheet policies` lists them"
    )


def policy_profiles(name: str | None = None) -> PolicyProfiles:
    """Every built-in profile, or only `name` (`PolicyError`, an `InputError`, when there is none)."""
    names = profile_names()
    if name is not None and name not in names:
        raise PolicyError(f"{name}: no such built-in profile (profiles: {', '.join(names)})")
    return PolicyProfiles(profiles={n: load_policy(n) for n in ([name] if name else names)})
