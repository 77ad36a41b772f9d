"""`factsheet export --format gpai-coverage`: the coverage matrix applied to one factsheet, as JSON."""

from __future__ import annotations

from pathlib import Path

from factsheet.coverage.matrix import Coverage, coverage
from factsheet.document.schema import Factsheet
from probes.core.files import write_atomic

COVERAGE_JSON = "gpai-coverage.json"


def sheet_coverage(sheet: Factsheet, sha256: str | None = None) -> Coverage:
    return coverage(sheet.model_dump(mode="json"), sheet.name, sha256)


def write_coverage(sheet: Factsheet, sha256: str, output: Path) -> Path:
    out = Path(output) / COVERAGE_JSON
    data = sheet_coverage(sheet, sha256).model_dump_json(indent=2).encode() + b"\n"
    return write_atomic(out, data)
