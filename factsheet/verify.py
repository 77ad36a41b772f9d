"""Validation of user files: a build spec, or a factsheet together with the raw records it names."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from factsheet.compliance.recheck import rechecked
from factsheet.errors import CheckFailed, InputError, describe_validation_error
from factsheet.provenance import sha256_bytes, tool_version
from factsheet.rederive import Discrepancy, rederive_report
from factsheet.schema import SCHEMA_VERSION, Factsheet
from factsheet.versions import BINDS_RECORDS, check_readable


def load_factsheet(path: Path) -> Factsheet:
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from exc
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON: {exc}") from exc
    if isinstance(data, dict) and data.get("kind") == "llm-factsheet":
        # The version first: a newer document's unknown fields would otherwise read as mere schema errors.
        check_readable(data.get("schema_version"), SCHEMA_VERSION, tool=f"llm-factsheet {tool_version()}")
    try:
        return Factsheet.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: not a valid factsheet: {describe_validation_error(exc)}") from exc


def check_records(sheet: Factsheet, folder: Path) -> list[str]:
    """Each raw-records file must exist and match its digest: the figures are traceable to them."""
    notes = []
    for _, rec in sheet.records_files():
        path = folder / rec.path
        if not path.is_file():
            raise CheckFailed(f"raw records {rec.path} named by the factsheet are missing")
        if sha256_bytes(path.read_bytes()) != rec.sha256:
            raise CheckFailed(f"raw records {rec.path} do not match the factsheet's sha256 (altered?)")
        notes.append(f"records {rec.path}: {rec.records} records, sha256 matches")
    return notes


class FiguresDiffer(CheckFailed):
    """Stated figures differ from what the raw records give (each one named)."""

    def __init__(self, discrepancies: list[Discrepancy]):
        self.discrepancies = discrepancies
        super().__init__(
            f"{len(discrepancies)} figure(s) differ from what the raw records give: "
            + "; ".join(d.describe() for d in discrepancies)
        )


def check_figures(sheet: Factsheet, folder: Path) -> list[str]:
    """Every figure the raw records determine, recomputed, and every records file bound to the context the
    factsheet states for it (after `check_records` vouched for the records' bytes)."""
    found = rederive_report(sheet, folder)
    if found.discrepancies:
        raise FiguresDiffer(found.discrepancies)
    notes = ["figures: every figure the raw records determine recomputes to the stated value"]
    if found.unbound:
        notes.append(
            f"records unbound (schema {sheet.schema_version} < {BINDS_RECORDS}: no context header): the "
            "settings, labels, SLO and start times they were measured under are attested only, not bound "
            f"({', '.join(found.unbound)})"
        )
    elif sheet.records_files():
        notes.append("records bound: every records file names the context the factsheet states for it")
    return notes


def validate_file(path: Path) -> tuple[str, list[str]]:
    if path.suffix in (".yaml", ".yml"):
        from factsheet.spec import load_spec

        load_spec(path)
        return "build spec", []
    sheet = load_factsheet(path)
    notes = check_records(sheet, path.parent)
    notes += rechecked(sheet, path)  # the compliance summary: its policies re-run on the sheet
    return f"factsheet (schema {sheet.schema_version})", notes + check_figures(sheet, path.parent)
