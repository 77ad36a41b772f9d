"""The gate as the CLI and the build run it: load everything first (bad input writes nothing), evaluate,
write the report, say whether the gate failed."""

from __future__ import annotations

import os
from pathlib import Path

from factsheet.compliance.evaluate import evaluate
from factsheet.compliance.policy import LoadedPolicy, PolicyError, load_policy
from factsheet.compliance.render import write_report
from factsheet.compliance.report import ComplianceReport
from factsheet.compliance.verdict import verdict_of_report
from factsheet.document.files import FACTSHEET_HTML, FACTSHEET_JSON
from factsheet.document.schema import Factsheet
from factsheet.rederive.validate import load_factsheet
from factsheet.untrusted.limits import MAX_FACTSHEET_BYTES, MAX_POLICIES
from factsheet.untrusted.reading import read_given
from probes.core.digests import sha256_bytes
from probes.core.errors import CheckFailed, InputError
from probes.core.measurement import NotMeasured


def load_policies(refs: list[str], base: Path | None = None) -> list[LoadedPolicy]:
    if len(refs) > MAX_POLICIES:
        raise PolicyError(f"{len(refs)} policies given: at most {MAX_POLICIES} are applied at once")
    policies = [load_policy(ref, base) for ref in refs]
    seen: set[str] = set()
    for p in policies:
        if p.id in seen:
            raise PolicyError(f"{p.source}: policy id {p.id!r} given twice (ids name the JUnit suites)")
        seen.add(p.id)
    return policies


def run_check(
    factsheet_json: Path,
    refs: list[str],
    output: Path | None,
    *,
    junit: Path | None = None,
    allow_insufficient: bool = False,
) -> tuple[ComplianceReport, list[Path]]:

    sheet = load_factsheet(factsheet_json)
    policies = load_policies(refs)
    report = check_sheet(sheet, factsheet_json, policies, allow_insufficient=allow_insufficient)
    out_dir = output or factsheet_json.parent
    href = os.path.relpath((factsheet_json.parent / FACTSHEET_HTML).absolute(), Path(out_dir).absolute())
    return report, write_report(report, out_dir, junit=junit, factsheet_href=href)


def check_sheet(
    sheet: Factsheet, factsheet_json: Path, policies: list[LoadedPolicy], *, allow_insufficient: bool = False
) -> ComplianceReport:
    """Evaluate `policies` over `sheet`, whose raw records lie beside `factsheet_json`."""
    try:
        # bounded like its first reading: the file may have been swapped since it was loaded
        digest = sha256_bytes(read_given(factsheet_json, MAX_FACTSHEET_BYTES, "factsheet"))
    except OSError:
        digest = sha256_bytes(sheet.model_dump_json(indent=2).encode())
    return evaluate(
        sheet,
        policies,
        folder=factsheet_json.parent,
        factsheet_path=str(factsheet_json),
        factsheet_sha256=digest,
        allow_insufficient=allow_insufficient,
    )


def gate_failure(report: ComplianceReport) -> str | None:
    """One line naming the rules that fail the gate, or None when it passes."""
    gating = [r for r in report.results if r.gating]
    if not gating:
        return None
    names = ", ".join(f"{r.policy}/{r.rule} ({r.outcome.replace('_', ' ')})" for r in gating)
    return f"compliance gate failed: {len(gating)} error rule(s): {names}"


class BuildGate:
    """The gate at the end of `factsheet build`: policies loaded before anything is measured (a bad policy is
    bad input, found in a second), evaluated once the measurements exist, summarised in the factsheet,
    the report written beside it, and the build's exit code following the verdict."""

    def __init__(self, spec, spec_path: Path):
        cfg = spec.compliance
        self.allow_insufficient = bool(cfg and cfg.allow_insufficient)
        self.policies = load_policies(cfg.policies, spec_path.parent) if cfg else []
        self.report: ComplianceReport | None = None
        self.report_sha256: str | None = None
        self.error: InputError | None = None

    def attach(self, sheet: Factsheet, out_dir: Path) -> Factsheet:
        """The sheet with the gate's summary. A policy that proves unusable only now (a unit or type that
        does not match the figure) leaves the measured factsheet intact; `raise_if_failed` reports it."""
        if not self.policies:
            return sheet
        try:
            self.report = check_sheet(
                sheet,
                Path(out_dir) / FACTSHEET_JSON,
                self.policies,
                allow_insufficient=self.allow_insufficient,
            )
        except InputError as exc:
            self.error = exc
            return sheet.model_copy(
                update={"compliance": NotMeasured(reason=f"the policy could not be applied: {exc}")}
            )
        return sheet.model_copy(update={"compliance": self.report.summary()})

    def write(self, out_dir: Path) -> list[Path]:
        """The report, naming the digest of the factsheet as written (which carries the summary)."""
        if self.report is None:
            return []
        json_path = Path(out_dir) / FACTSHEET_JSON
        ref = self.report.factsheet.model_copy(update={"sha256": sha256_bytes(json_path.read_bytes())})
        self.report = self.report.model_copy(update={"factsheet": ref})
        paths = write_report(self.report, out_dir)
        self.report_sha256 = sha256_bytes(paths[0].read_bytes())  # compliance.json, as a signature names it
        return paths

    def raise_if_failed(self) -> None:
        if self.error is not None:
            raise self.error
        failure = None if self.report is None else gate_failure(self.report)
        if failure:
            raise CheckFailed(failure)

    def verdict(self):
        """The gate's verdict for a signed build (in-toto Test Result terms), or None when no policy ran."""
        if self.report is None:
            return None

        verdict = verdict_of_report(self.report.model_dump(mode="json"))
        return verdict.model_copy(update={"report_sha256": self.report_sha256})
