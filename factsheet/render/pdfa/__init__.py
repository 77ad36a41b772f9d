"""Archival, accessible PDF: PDF/A-3u, tagged (structure tree, alt text of images), with the machine-
readable record embedded as an associated file. Used by the factsheet and the compliance report.

weasyprint does the work (`pdf_variant`, `pdf_tags`, attachments with a relationship); its output is
not guaranteed valid, so tests check what can be checked offline and the README says how to run
veraPDF for the full validation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pydyf

PDF_VARIANT = "pdf/a-3u"  # part 3 allows embedded non-PDF files; U: all text maps to Unicode


@dataclass(frozen=True)
class AssociatedFile:
    """A file embedded in the PDF and associated with the whole document (PDF/A-3 /AF)."""

    name: str
    data: bytes
    description: str
    mime_type: str = "application/json"
    relationship: str = "Data"  # ISO 32000-2 7.11.3: the data the document was rendered from


def archival_pdf(html: str, base_url: str, files: Sequence[AssociatedFile] = ()) -> bytes:
    """Print `html` to PDF/A-3u bytes, tagged, with `files` embedded as associated files."""
    import weasyprint  # deferred: it loads pango (~0.7 s), which only PDF output needs

    attachments = [
        weasyprint.Attachment(
            string=f.data, name=f.name, description=f.description, relationship=f.relationship
        )
        for f in files
    ]
    mime = {f.name: f.mime_type for f in files}
    return weasyprint.HTML(string=html, base_url=base_url).write_pdf(
        attachments=attachments,
        pdf_variant=PDF_VARIANT,
        pdf_tags=True,
        finisher=lambda _doc, pdf: _finish(pdf, mime),
    )


def _finish(pdf, mime: dict[str, str]) -> None:
    """Set each embedded file's MIME type as given (not guessed from its name), and list each
    associated file once in the catalogue's /AF (weasyprint adds attachments twice)."""
    for obj in pdf.objects:
        if not isinstance(obj, dict) or obj.get("Type") != "/Filespec":
            continue
        name = _text(obj.get("UF") or obj.get("F"))
        ref = obj.get("EF", {}).get("F")
        if name in mime and isinstance(ref, str):
            stream = pdf.objects[int(ref.split()[0])]
            stream.extra["Subtype"] = "/" + mime[name].replace("/", "#2f")
    af = pdf.catalog.get("AF")
    if af is not None:
        seen: list = []
        for ref in af:
            if ref not in seen:
                seen.append(ref)
        pdf.catalog["AF"] = pydyf.Array(seen)


def _text(value) -> str | None:
    """A pydyf String's text (pydyf keeps it in `.string`), or the value itself."""
    return getattr(value, "string", value)
