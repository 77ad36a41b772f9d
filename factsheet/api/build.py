"""`build_factsheet`: what `factsheet build` does, as one call: the signing key and the policies loaded
before anything is measured, the measurements, the policy gate's summary attached, the documents rendered,
the gate's report, the signature, and the MLflow publication the spec asks for."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from factsheet.api.results import Result
from factsheet.attest.attestation import build_signer, key_id, results_path, sign_factsheet
from factsheet.attest.plan import Plan
from factsheet.builder.pipeline import build
from factsheet.compliance.gate import BuildGate, gate_failure
from factsheet.compliance.report import ComplianceReport
from factsheet.document.files import BUILD_ROOT, FACTSHEET_JSON, MEASUREMENTS_DIR
from factsheet.document.schema import Factsheet
from factsheet.publish.mlflow import PublishResult, check_reachable, publish_factsheet
from factsheet.render import render_all
from factsheet.spec.build import load_spec
from probes.core.digests import sha256_bytes
from probes.core.errors import InputError
from probes.core.progress import Bars, no_bars

Log = Callable[[str], None]


def _quiet(message: str) -> None:
    """The API prints nothing unless a `log` is given."""


class BuildResult(Result):
    """A finished build: its folder, the factsheet as written, and the gate, signature and publication."""

    output: Path = Field(description="the build's output folder")
    factsheet: Factsheet = Field(description="the factsheet as written to factsheet.json")
    compliance: ComplianceReport | None = Field(None, description="the policy gate's report; None: no policy")
    attestation: Path | None = Field(None, description="the signature written; None: the build is unsigned")
    publication: PublishResult | None = Field(None, description="the MLflow run; None: not published")
    records: tuple[Path, ...] = Field((), description="the raw records files the factsheet names")
    checkpoints: tuple[Path, ...] = Field((), description="measurements kept for --resume")
    error: str | None = Field(
        None,
        description="bad input found only after the files were written (a policy that does not fit the "
        "figures, a refused publication): the CLI's exit 2",
    )

    @property
    def json_path(self) -> Path:
        return self.output / FACTSHEET_JSON

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file the build leaves in its folder: raw records, checkpoints, then `written`."""
        return self.records + self.checkpoints + self.written

    @property
    def exit_code(self) -> int:
        return 2 if self.error is not None else super().exit_code

    def raise_for_status(self) -> None:
        if self.error is not None:
            raise InputError(self.error)
        super().raise_for_status()


def build_factsheet(
    spec: Path,
    output: Path | None = None,
    *,
    resume: bool = False,
    overwrite: bool = False,
    sign_key: Path | None = None,
    log: Log = _quiet,
    bars: Bars = no_bars,
    budget_s: float | None = None,
) -> BuildResult:
    """Measure the deployment `spec` describes and write its factsheet (JSON, HTML, PDF), raw records, the
    compliance report when the spec names policies, and the signature when a key is given (`sign_key`
    wins over the spec's `sign.key`). Without `output`, the spec's `output_dir`, else out/<name>.

    Bad input (spec, key, policy, unreachable MLflow, an output folder holding another build) raises
    `InputError` before anything is measured. A failed gate does not raise: the files are written and the
    result's `failure` says why (`exit_code` 1)."""
    if budget_s is not None and not (math.isfinite(budget_s) and budget_s > 0):
        raise InputError(f"--budget: {budget_s:g} s: a time budget is a positive number of seconds")
    if resume and overwrite:
        raise InputError("--resume and --overwrite: choose one (reuse the earlier build, or replace it)")
    parsed, raw = load_spec(Path(spec))
    signer = build_signer(parsed.sign, Path(spec), sign_key)
    gate = BuildGate(parsed, Path(spec))  # policies checked before anything is measured
    if parsed.publish is not None:  # MLflow installed and answering, before anything is measured
        check_reachable(parsed.publish)
    out_dir = Path(output or parsed.output_dir or f"{BUILD_ROOT}/{parsed.name}")
    # the bar, signed before the first request is sent (written once the folder exists)
    plan = (
        Plan(gate.policies, Path(spec).name, sha256_bytes(raw), signer) if signer and gate.policies else None
    )
    sheet = build(parsed, Path(spec), raw, out_dir, log=log, bar=bars, resume=resume, overwrite=overwrite,
                  budget_s=budget_s)  # fmt: skip
    sheet = gate.attach(sheet, out_dir)
    paths = render_all(
        sheet,
        out_dir,
        signing_key_id=key_id(signer.public_key()) if signer else None,
        planned_at=plan.planned_at if plan else None,
    )
    paths += gate.write(out_dir)
    attestation = None
    if signer is not None:
        planned = None if plan is None else plan.write(out_dir / FACTSHEET_JSON)
        if planned is not None:
            paths.append(out_dir / planned["name"])
        attestation = sign_factsheet(
            out_dir / FACTSHEET_JSON, signer, gate.report, gate.report_sha256, sheet=sheet, plan=planned
        ).attestation
        results = results_path(out_dir / FACTSHEET_JSON)
        paths += [results, attestation] if results.exists() else [attestation]
    publication, error = None, None
    if parsed.publish is not None:  # whatever the gate's verdict: the run and version carry it as a tag
        try:
            publication = publish_factsheet(out_dir / FACTSHEET_JSON, parsed.publish)
        except InputError as exc:  # the files stay written; the result says the publication failed
            error = str(exc)
    void = sheet.headline.void if sheet.headline is not None else None
    # A void measurement never exits 0: its files are written and page 1 says why (headline.void).
    failure = f"the measurement is void: {void}" if void else _gate_failure(gate)
    return BuildResult(
        output=out_dir,
        factsheet=sheet,
        written=tuple(paths),
        records=tuple(out_dir / rec.path for _, rec in sheet.records_files()),
        checkpoints=tuple(sorted((out_dir / MEASUREMENTS_DIR).glob("*.json"))),
        compliance=gate.report,
        attestation=attestation,
        publication=publication,
        error=error or (str(gate.error) if gate.error is not None else None),
        failure=failure,
    )


def _gate_failure(gate) -> str | None:
    return None if gate.report is None else gate_failure(gate.report)
