"""The factsheet PDF is archival (PDF/A-3u with its JSON as associated file) and accessible (tagged,
every chart with alt text), checked offline; veraPDF does the full validation (README)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from factsheet.render import render_all
from tests.render.pdfa_checks import read_facts
from tests.support import sheet_fixture as fx

pytestmark = [pytest.mark.system, pytest.mark.pdf]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pdfa")
    render_all(fx.build_sheet(fx.load_points()), folder, signing_key_id="ab" * 32)
    return folder


@pytest.fixture(scope="module")
def facts(out):
    return read_facts((out / "factsheet.pdf").read_bytes())


def test_xmp_declares_pdfa_3u(facts):
    assert (facts.pdfa_part, facts.pdfa_conformance) == ("3", "U")


def test_output_intent_is_srgb(facts):
    assert len(facts.output_intents) == 1
    oi = facts.output_intents[0]
    assert oi["subtype"] == "/GTS_PDFA1" and "sRGB" in oi["identifier"]
    assert oi["components"] == 3 and oi["colour_space"] == "RGB " and oi["icc_signature"] == b"acsp"


def test_the_json_is_the_associated_file_it_was_rendered_from(facts, out):
    assert [a.name for a in facts.associated] == ["factsheet.json"]
    record = facts.associated[0]
    assert record.relationship == "/Data" and record.mime_type == "application/json"
    assert record.in_catalog_af and facts.catalog_af_entries == 1
    assert record.data == (out / "factsheet.json").read_bytes()


def test_tagged_with_a_structure_tree_and_a_language(facts):
    assert facts.marked and facts.has_structure_tree and facts.lang == "en"


def test_every_chart_has_alt_text(facts, out):
    html = (out / "factsheet.html").read_text(encoding="utf-8")
    images = re.findall(r"<img [^>]*>", html)
    # the headline run's latency distribution, two load charts, power over the energy window, the tuner's climb
    # (p99 against the SLO, goodput)
    assert len(images) == 6
    assert len(facts.figure_alts) == len(images)
    assert all(alt and len(alt) > 40 for alt in facts.figure_alts), facts.figure_alts
    assert any(alt.startswith("Latency p50") for alt in facts.figure_alts)


def test_documents_name_the_record_digest_and_the_signing_key(out):
    digest = "sha256:" + hashlib.sha256((out / "factsheet.json").read_bytes()).hexdigest()
    html = (out / "factsheet.html").read_text(encoding="utf-8")
    assert digest in html and "ab" * 32 in html
    import pypdf

    text = "".join(p.extract_text() for p in pypdf.PdfReader(out / "factsheet.pdf").pages[:1])
    assert digest[:30] in text.replace("\n", "") and ("ab" * 16) in text.replace("\n", "")
    json.loads((out / "factsheet.json").read_bytes())  # the JSON itself is untouched by this


def test_unsigned_rendering_says_so(tmp_path):
    render_all(fx.empty_sheet(), tmp_path)
    html = (tmp_path / "factsheet.html").read_text(encoding="utf-8")
    assert "not signed when rendered" in html
    assert read_facts((tmp_path / "factsheet.pdf").read_bytes()).pdfa_part == "3"


def test_any_document_printed_by_render_pdf_gets_the_same_archival_form(tmp_path):
    # The compliance report prints through render_pdf with its own record: same PDF/A, /AF and tags.
    from factsheet.render import render_pdf

    svg = (
        b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'
    )
    uri = "data:image/svg+xml;base64," + __import__("base64").b64encode(svg).decode()
    html = f'<!DOCTYPE html><html lang="en"><head><title>Report</title></head><body><h1>Report</h1><img src="{uri}" alt="a black square"></body></html>'
    render_pdf(
        html, b'{"verdict": "pass"}', tmp_path / "c.pdf", name="compliance.json", description="the report"
    )
    facts = read_facts((tmp_path / "c.pdf").read_bytes())
    assert (facts.pdfa_part, facts.pdfa_conformance) == ("3", "U") and facts.output_intents
    (record,) = facts.associated
    assert (record.name, record.relationship, record.mime_type) == (
        "compliance.json",
        "/Data",
        "application/json",
    )
    assert record.data == b'{"verdict": "pass"}' and record.in_catalog_af
    assert facts.has_structure_tree and facts.figure_alts == ["a black square"]


def test_every_chart_is_vector_in_the_pdf(out):
    """The charts are SVG in the HTML and drawn as vector paths in the PDF: no page holds a raster image."""
    import pypdf

    def images(xobjects) -> int:
        count = 0
        for ref in (xobjects or {}).values():
            x = ref.get_object()
            if x.get("/Subtype") == "/Image":
                count += 1
            elif x.get("/Subtype") == "/Form":  # a chart's drawing: look inside it too
                count += images(x.get("/Resources", {}).get("/XObject"))
        return count

    pages = pypdf.PdfReader(out / "factsheet.pdf").pages
    assert sum(images(p.get("/Resources", {}).get("/XObject")) for p in pages) == 0
