"""Validation of user files: a build spec, or a factsheet together with the raw records it names."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from factsheet.document.rules import rule
from factsheet.document.schema import SCHEMA_VERSION, Factsheet
from factsheet.document.stamp import tool_version
from factsheet.document.versions import check_readable
from factsheet.rederive import Discrepancy, rederivation
from factsheet.untrusted.limits import MAX_FACTSHEET_BYTES, MAX_RECORDS_TOTAL_BYTES
from factsheet.untrusted.parsing import check_factsheet_counts, parse_json
from factsheet.untrusted.reading import read_given, read_records_file
from probes.core.digests import sha256_bytes
from probes.core.errors import CheckFailed, InputError, describe_validation_error
from probes.core.measurement import NotMeasured


def load_factsheet(path: Path) -> Factsheet:
    """A factsheet someone else may have made: a regular file within the size limit, nesting and numbers
    bounded before it is parsed, its load points counted before they are validated (factsheet.untrusted)."""
    try:
        raw = read_given(path, MAX_FACTSHEET_BYTES, "factsheet")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from exc
    return parse_factsheet(raw, path)


def parse_factsheet(raw: bytes, path: Path) -> Factsheet:
    """`load_factsheet` on bytes already read within the size limit (the catalogue hashes and keeps the very
    bytes it parsed); `path` names them in messages."""
    data = parse_json(raw, str(path))
    check_factsheet_counts(data, str(path))
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
    total = 0
    for _, rec in sheet.records_files():
        try:  # confined to the folder and bounded: refused (exit 2) before it is opened otherwise
            data = read_records_file(folder, rec.path)
        except OSError as exc:
            raise CheckFailed(f"raw records {rec.path} named by the factsheet are missing") from exc
        total += len(data)
        if total > MAX_RECORDS_TOTAL_BYTES:
            raise InputError(
                f"{folder}: raw records over {MAX_RECORDS_TOTAL_BYTES:,} bytes in all (at {rec.path})"
            )
        if sha256_bytes(data) != rec.sha256:
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
    found = rederivation(sheet, folder)
    if found.discrepancies:
        raise FiguresDiffer(found.discrepancies)
    notes = ["figures: every figure the raw records determine recomputes to the stated value"]
    if sheet.headline is None:
        notes.append(
            f"headline: not stated (schema {sheet.schema_version}); readers compute it from the sheet"
        )
    else:
        notes.append("headline: every page-1 figure recomputes from the rest of the sheet")
    notes.append(_template_note(sheet))
    if found.unbound:
        notes.append(
            f"records unbound (schema {sheet.schema_version} < {rule('records/bound').began}: no context header): the "
            "settings, labels, SLO and start times they were measured under are attested only, not bound "
            f"({', '.join(found.unbound)})"
        )
    elif sheet.records_files():
        notes.append("records bound: every records file names the context the factsheet states for it")
    return notes


def _template_note(sheet: Factsheet) -> str:
    """What validate could say of the chat template (checked in `rederivation`)."""
    facts = sheet.system.deployment
    if facts is None:
        return f"chat template: not stated (schema {sheet.schema_version})"
    template = facts.chat_template
    if isinstance(template, NotMeasured):
        return f"chat template: not measured ({template.reason})"
    if template.text is None:
        return f"chat template: {template.size_bytes:,} bytes, named by its sha256 alone (text not kept)"
    return "chat template: the kept text hashes to its stated sha256"


def check_outlet(sheet: Factsheet, path: Path) -> None:
    """Before an outlet (`export`, `publish`) writes or sends anything: the raw records match their digests
    and every figure they determine, the headline included, recomputes to the stated value; else
    CheckFailed (exit 1) naming each figure that does not."""
    folder = Path(path).parent
    check_records(sheet, folder)
    check_figures(sheet, folder)
