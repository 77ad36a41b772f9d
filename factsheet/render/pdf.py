"""The PDF every document prints to: archival (PDF/A-3u), tagged, A4, with its JSON record attached.

factsheet.render.pdfa does the printing; this module names the record the PDF was rendered from, so a reader who
holds the PDF holds the machine-checkable document too.
"""

from __future__ import annotations

from pathlib import Path

from factsheet.render.pdfa import AssociatedFile, archival_pdf
from factsheet.resources import TEMPLATES, package_data
from probes.core.files import write_atomic


def pdf_bytes(html: str, record: bytes, *, name: str, description: str) -> bytes:
    """`html` printed to an archival PDF with `record` (JSON) attached as `name`, the document's source."""
    attached = AssociatedFile(name=name, data=record, description=description)
    # Styles and charts are inline: the base URL only anchors relative links, if a template ever has one.
    return archival_pdf(html, str(package_data(TEMPLATES)), [attached])


def render_pdf(html: str, record: bytes, path: Path, *, name: str, description: str) -> Path:
    """`pdf_bytes` written atomically to `path` (one document alone; a set goes through `write_set`)."""
    return write_atomic(Path(path), pdf_bytes(html, record, name=name, description=description))
