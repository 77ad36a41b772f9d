"""`render_factsheet` (`factsheet render`) and `export_factsheet` (`factsheet export`): documents made
from a factsheet that already exists."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from factsheet.api.results import Result
from factsheet.coverage.export import write_coverage
from factsheet.export import cyclonedx, hf, spdx
from factsheet.export.formats import ExportFormat
from factsheet.export.readout import source
from factsheet.rederive.validate import check_outlet, load_factsheet
from factsheet.render import check_folder, render_all


class RenderResult(Result):
    """The HTML and PDF (and, rendered elsewhere, the JSON) written."""


def render_factsheet(factsheet_json: Path, output: Path | None = None) -> RenderResult:
    """Render the factsheet to HTML and PDF beside it, or into `output` together with a copy of its JSON."""
    factsheet_json = Path(factsheet_json)
    sheet = load_factsheet(factsheet_json)
    written = render_all(sheet, output or factsheet_json.parent, write_json=output is not None)
    return RenderResult(written=tuple(written))


class ExportResult(Result):
    """The export's main document (and, for `hf`, the .eval_results files beside it, in `written`)."""

    document: Path = Field(description="README.md, bom.cdx.json, factsheet.spdx.jsonld or gpai-coverage.json")
    factsheet_sha256: str = Field(description="'sha256:<hex>' of the factsheet file exported")


def export_factsheet(factsheet_json: Path, format: ExportFormat | str, output: Path) -> ExportResult:
    """Export the factsheet for a model registry into the folder `output`; only measured figures go in,
    and names no export can carry safely are refused (`InputError`) before anything is written. The sheet
    is re-derived first: a figure that does not recompute from its records is refused (`CheckFailed`, exit 1,
    naming it) and nothing is written."""
    fmt = ExportFormat(format)
    factsheet_json, output = Path(factsheet_json), Path(output)
    sheet = load_factsheet(factsheet_json)
    output = check_folder(output)
    src = source(factsheet_json, sheet)  # names no export can carry: refused first (exit 2)
    check_outlet(sheet, factsheet_json)  # then every figure re-derived, the headline's included (exit 1)
    if fmt is ExportFormat.hf:
        written = hf.write_files(src, output)
    elif fmt is ExportFormat.gpai_coverage:
        written = [write_coverage(src.sheet, src.sha256, output)]
    else:
        written = [{ExportFormat.cyclonedx: cyclonedx.write, ExportFormat.spdx: spdx.write}[fmt](src, output)]
    return ExportResult(document=written[0], written=tuple(written), factsheet_sha256=src.sha256)
