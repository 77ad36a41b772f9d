"""compliance.json, compliance.html, compliance.pdf and JUnit XML, made with the factsheet's own machinery
(the same jinja2 environment, filters, stylesheet and weasyprint printing; the PDF carries the JSON)."""

from __future__ import annotations

from pathlib import Path

from markupsafe import Markup

from factsheet.compliance.junit import junit_bytes
from factsheet.compliance.report import ComplianceReport
from factsheet.outputs import (
    COMPLIANCE_HTML,
    COMPLIANCE_JSON,
    COMPLIANCE_JUNIT,
    COMPLIANCE_PDF,
    FACTSHEET_HTML,
)
from factsheet.render import CSS_FILE, RenderError, _environment, render_pdf
from factsheet.resources import TEMPLATES, data_file
from probes.core.files import write_atomic

TEMPLATE = "compliance.html.j2"


def render_html(report: ComplianceReport, factsheet_href: str = FACTSHEET_HTML) -> str:
    css = Markup(data_file(TEMPLATES, CSS_FILE).read_text(encoding="utf-8"))  # our own file: trusted
    return _environment().get_template(TEMPLATE).render(report=report, css=css, factsheet_href=factsheet_href)


def write_report(
    report: ComplianceReport,
    out_dir: Path,
    *,
    junit: Path | None = None,
    factsheet_href: str = FACTSHEET_HTML,
) -> list[Path]:
    """JSON first (the record), then HTML, PDF (JSON attached) and JUnit; returns the paths written."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise RenderError(f"output folder {out_dir}: exists and is not a folder")
    if junit is not None and junit.is_dir():
        raise RenderError(f"--junit {junit}: is a folder, not a file")
    data = report.model_dump_json(indent=2).encode()
    write_atomic(out_dir / COMPLIANCE_JSON, data)
    html = render_html(report, factsheet_href)
    write_atomic(out_dir / COMPLIANCE_HTML, html.encode())
    render_pdf(
        html,
        data,
        out_dir / COMPLIANCE_PDF,
        name=COMPLIANCE_JSON,
        description="The compliance report as JSON (the record this document was rendered from)",
    )
    junit = junit or out_dir / COMPLIANCE_JUNIT
    write_atomic(junit, junit_bytes(report))
    return [out_dir / COMPLIANCE_JSON, out_dir / COMPLIANCE_HTML, out_dir / COMPLIANCE_PDF, junit]
