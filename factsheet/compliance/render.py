"""compliance.json, compliance.html, compliance.pdf and JUnit XML, through the one document renderer
(`factsheet.render`: the same jinja2 environment, filters, stylesheet and PDF/A printing; the PDF carries
the JSON)."""

from __future__ import annotations

from pathlib import Path

from factsheet.compliance.junit import junit_bytes
from factsheet.compliance.report import ComplianceReport
from factsheet.document.files import (
    COMPLIANCE_HTML,
    COMPLIANCE_JSON,
    COMPLIANCE_JUNIT,
    COMPLIANCE_PDF,
    FACTSHEET_HTML,
)
from factsheet.render import RenderError, check_folder, page, pdf_bytes, write_set

TEMPLATE = "compliance.html.j2"
RECORD_DESCRIPTION = "The compliance report as JSON (the record this document was rendered from)"


def render_html(report: ComplianceReport, factsheet_href: str = FACTSHEET_HTML) -> str:
    return page(TEMPLATE, report=report, factsheet_href=factsheet_href)


def write_report(
    report: ComplianceReport,
    out_dir: Path,
    *,
    junit: Path | None = None,
    factsheet_href: str = FACTSHEET_HTML,
) -> list[Path]:
    """JSON (the record), HTML, PDF (JSON attached) and JUnit, written as one set; returns the paths."""
    out_dir = check_folder(out_dir)
    if junit is not None and junit.is_dir():
        raise RenderError(f"--junit {junit}: is a folder, not a file")
    data = report.model_dump_json(indent=2).encode()
    html = render_html(report, factsheet_href)
    pdf = pdf_bytes(html, data, name=COMPLIANCE_JSON, description=RECORD_DESCRIPTION)
    return write_set(
        [
            (out_dir / COMPLIANCE_JSON, data),
            (out_dir / COMPLIANCE_HTML, html.encode()),
            (out_dir / COMPLIANCE_PDF, pdf),
            (junit or out_dir / COMPLIANCE_JUNIT, junit_bytes(report)),
        ]
    )
