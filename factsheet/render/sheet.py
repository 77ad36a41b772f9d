"""The factsheet as a document: its HTML (one page frame, one partial per section) and its set of files.

The page frame (templates/factsheet.html.j2) includes one partial per section (templates/sections/), all
built from the macros in templates/macros.html.j2; what a section shows is shaped in `view`, its charts in
`sheet_charts`. The PDF is printed from the same HTML and carries the factsheet JSON as an attachment, so
the document a reader holds contains the machine-checkable record it was made from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from factsheet.coverage.export import sheet_coverage
from factsheet.document.files import FACTSHEET_HTML, FACTSHEET_JSON, FACTSHEET_PDF
from factsheet.document.schema import Factsheet
from factsheet.render.environment import page
from factsheet.render.files import check_folder, write_set
from factsheet.render.glance import glance_rows, rebuild_method
from factsheet.render.pdf import pdf_bytes
from factsheet.render.reviewer import summary
from factsheet.render.sheet_charts import figures
from factsheet.render.view import coverage_groups, view
from factsheet.untrusted.limits import MAX_FACTSHEET_BYTES
from factsheet.untrusted.reading import read_given
from probes.core.digests import sha256_bytes
from probes.load.metrics import LATENCY_LABELS

HTML_TEMPLATE = "factsheet.html.j2"
SECTIONS = (
    "masthead",
    "summary",  # the reviewer's summary: at most two pages
    "headline",  # then the evidence, in the summary's order
    "identity",
    "system",
    "load",
    "accuracy",
    "energy",
    "tuning",
    "predictor",
    "compliance",
    "coverage",  # the governance forms' items: measured here, declared, or not claimed
    "definitions",  # the appendices: methods, then the provenance and raw-record listings last
    "provenance",
)  # the partials under templates/sections/, in page order
RECORD_DESCRIPTION = "The factsheet as JSON (the record this document was rendered from)"


@dataclass(frozen=True)
class Integrity:
    """What the rendered documents say about the record they show."""

    json_sha256: str  # 'sha256:...' of the factsheet.json bytes (also attached to the PDF)
    signing_key_id: str | None = None  # set when the build signs the outputs
    planned_at: str | None = None  # when the build signed its gate's policies, before measuring


def render_html(sheet: Factsheet, integrity: Integrity | None = None) -> str:
    """The factsheet as one self-contained HTML document (styles and charts inline); with `integrity`,
    it names the digest of the JSON it was rendered from and the key that signs it."""
    key, digest, planned = (
        (integrity.signing_key_id, integrity.json_sha256, integrity.planned_at)
        if integrity
        else (None, None, None)
    )
    shown = view(sheet)
    weak = shown["load"]["flagged_points"] if shown["load"] else 0
    return page(
        HTML_TEMPLATE,
        sheet=sheet,
        integrity=integrity,
        sections=SECTIONS,
        view=shown,
        figures=figures(sheet),
        metric_names=LATENCY_LABELS,
        glance=glance_rows(sheet),
        rebuild_method=rebuild_method(sheet),
        coverage=(coverage := sheet_coverage(sheet)),
        coverage_groups=coverage_groups(coverage),
        reviewer=summary(sheet, key, digest, weak, planned),
    )


def render_all(
    sheet: Factsheet,
    out_dir: Path,
    *,
    write_json: bool = True,
    signing_key_id: str | None = None,
    planned_at: str | None = None,
) -> list[Path]:
    """Write factsheet.json (first), .html and .pdf into `out_dir`; returns the paths written.

    With `write_json=False` (re-rendering a factsheet in place) the JSON file is left alone, and the
    PDF carries its bytes when it holds this very factsheet (else the factsheet's own JSON).
    """
    out_dir = check_folder(out_dir)
    json_path = out_dir / FACTSHEET_JSON
    canonical = sheet.model_dump_json(indent=2).encode()
    record = json_to_attach(sheet, json_path) if not write_json else canonical
    html = render_html(sheet, Integrity(sha256_bytes(record), signing_key_id, planned_at))
    pdf = pdf_bytes(html, record, name=FACTSHEET_JSON, description=RECORD_DESCRIPTION)
    files = ([(json_path, canonical)] if write_json else []) + [
        (out_dir / FACTSHEET_HTML, html.encode()),
        (out_dir / FACTSHEET_PDF, pdf),
    ]
    return write_set(files)


def json_to_attach(sheet: Factsheet, json_path: Path) -> bytes:
    """The bytes of `json_path` if it is this factsheet's JSON, else the factsheet serialised afresh."""
    canonical = sheet.model_dump_json(indent=2).encode()
    try:
        existing = read_given(json_path, MAX_FACTSHEET_BYTES, "factsheet")  # bounded, never a FIFO
        same = Factsheet.model_validate_json(existing).model_dump_json(indent=2).encode() == canonical
    except (OSError, ValueError):  # missing, unreadable or another document: not this factsheet's record
        return canonical
    return existing if same else canonical
