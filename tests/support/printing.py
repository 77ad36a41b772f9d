"""The PDF printer in tests: real where a test reads the PDF (`pytest.mark.pdf`), a placeholder elsewhere.

Printing is a quarter of the suite's CPU: weasyprint lays out each document in about 1.6 CPU-seconds on the
2-core reference host, and the suite's in-process builds and checks print about 380 of them, nearly all in
tests about measured figures, records, signing or gates, which never open the PDF. Those tests get a
one-page PDF that names the document it stands for (a digest of its HTML and records, so two documents never
print the same bytes, and a flipped byte of either shows). Every test that reads what is printed (tests/render/,
the PDF's text in the gate and signing tests, the embedded target end to end) and every build in a
subprocess still prints for real. What `factsheet build` does is unchanged: this swaps the printer only inside
the test process, through the one name every writer prints with (`factsheet.render.pdf.archival_pdf`).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence

import pydyf
import pytest

import factsheet.render.pdf as printer
from factsheet.render.pdfa import AssociatedFile, archival_pdf

MARK = "pdf"
_real = {"wanted": True}


def _placeholder(html: str, base_url: str, files: Sequence[AssociatedFile] = ()) -> bytes:
    digest = hashlib.sha256(html.encode())
    for f in files:
        digest.update(f.name.encode() + b"\0" + f.data)
    doc = pydyf.PDF()
    doc.info["Title"] = pydyf.String(f"not printed in this test: sha256 {digest.hexdigest()}")
    page = pydyf.Dictionary(
        {"Type": "/Page", "Parent": doc.pages.reference, "MediaBox": pydyf.Array([0, 0, 595, 842])}
    )
    doc.add_page(page)
    out = io.BytesIO()
    doc.write(out)
    return out.getvalue()


def _print(html: str, base_url: str, files: Sequence[AssociatedFile] = ()) -> bytes:
    return (archival_pdf if _real["wanted"] else _placeholder)(html, base_url, files)


def install() -> None:
    """Route the test process's printing through `_print` (once, at configure)."""
    printer.archival_pdf = _print  # type: ignore[assignment]


def choose(item: pytest.Item) -> None:
    """Before `item`'s fixtures are set up: print for real only where it (or its file) is marked `pdf`."""
    _real["wanted"] = item.get_closest_marker(MARK) is not None
