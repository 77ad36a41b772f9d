"""`validate_factsheet`: a build spec, or a factsheet with its raw records re-derived (`factsheet
validate`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from factsheet.api.results import Result
from factsheet.compliance.recheck import recheck, rechecked
from factsheet.rederive import Discrepancy
from factsheet.rederive.coverage import explain as classes
from factsheet.rederive.validate import FiguresDiffer, check_figures, check_records, load_factsheet
from factsheet.spec.build import load_spec
from probes.core.errors import CheckFailed


class ValidateResult(Result):
    """What was validated and what was checked; `failure` (with the `discrepancies` when figures differ)
    says what did not hold."""

    kind: str | None = Field(None, description="'build spec' or 'factsheet (schema X)'; None when it failed")
    notes: tuple[str, ...] = Field((), description="each check that held (records, figures, compliance)")
    discrepancies: tuple[Discrepancy, ...] = Field(
        (), description="figures whose stated value is not what the raw records give"
    )
    explanation: tuple[str, ...] = Field(
        (), description="with `explain`: which fields are re-derived, re-checked, or attested only"
    )


def validate_factsheet(path: Path, *, explain: bool = False) -> ValidateResult:
    """Validate a build spec (.yaml) or a factsheet (.json: schema, the raw records' digests and bindings,
    every figure they determine, the compliance summary). Unreadable or malformed input raises
    `InputError`; records or figures that do not match are the result's `failure` (exit 1)."""
    explanation = tuple(classes()) if explain else ()
    try:
        kind, notes = validate_file(Path(path))
    except CheckFailed as exc:
        found = tuple(exc.discrepancies) if isinstance(exc, FiguresDiffer) else ()
        return ValidateResult(failure=str(exc), discrepancies=found, explanation=explanation)
    return ValidateResult(kind=kind, notes=tuple(notes), explanation=explanation)


def validate_file(path: Path) -> tuple[str, list[str]]:
    """What `path` is and each check that held: a build spec loads; a factsheet's records, compliance summary
    (its policies re-run on the sheet) and figures re-derive."""
    if path.suffix in (".yaml", ".yml"):
        load_spec(path)
        return "build spec", []
    sheet = load_factsheet(path)
    notes = check_records(sheet, path.parent)
    try:
        figures = check_figures(sheet, path.parent)
    except FiguresDiffer as exc:
        # A forged figure first: the summary's findings, re-run on it, differ only because of it.
        raise FiguresDiffer(exc.discrepancies + recheck(sheet, path)) from None
    notes += rechecked(sheet, path)
    return f"factsheet (schema {sheet.schema_version})", notes + figures
