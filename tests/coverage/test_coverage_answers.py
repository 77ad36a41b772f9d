"""The coverage map's answer for each item, against a factsheet whose contents are known: measured here (a
pointer holds what the tool measured or recorded), declared by the author (only the spec's words), or not
claimed (nothing present; for NIST AI 600-1, not assessed by this tool)."""

from __future__ import annotations

import pytest

from factsheet.coverage.export import sheet_coverage
from factsheet.coverage.matrix import declared
from factsheet.document.governance import Governance
from factsheet.render.sheet import render_html
from tests.render.page import Page
from tests.support import sheet_fixture as fx


@pytest.fixture(scope="module")
def sheet():
    return fx.build_sheet(fx.load_points())


def _answers(sheet) -> dict[tuple[str, str], str]:
    return {(i.framework, i.item): i.answer for i in sheet_coverage(sheet).items}


def test_pointers_are_declared_only_under_the_authors_sections():
    assert declared("/identity/intended_use") and declared("/governance/standards") and declared("/identity")
    assert not declared("/identity/served_model/digests")  # the weights' digests are recorded by the tool
    assert not declared("/headline/figures") and not declared("/identityx")


def test_answers_without_a_governance_section(sheet):
    a = _answers(sheet)
    assert a["gpai-cop-mdf", "model authenticity (a secure hash, or an endpoint)"] == "measured"  # digests
    assert a["gpai-cop-mdf", "provider and model names and versions"] == "declared"
    assert a["gpai-cop-mdf", "release dates"] == "not_claimed"
    assert a["spdx-3-aipackage", "standardCompliance"] == "not_claimed"
    assert a["nist-ai-600-1", "CBRN information or capabilities"] == "not_claimed"
    assert a["nist-ai-600-1", "value chain and component integration"] == "measured"


def test_declared_governance_fields_turn_their_items_declared(sheet):
    gov = Governance.model_validate({"release_date": "2024-11-01", "standards": ["ISO/IEC 42001:2023"],
                                     "adapters": []})  # fmt: skip
    a = _answers(sheet.model_copy(update={"governance": gov}))
    assert a["gpai-cop-mdf", "release dates"] == "declared"
    assert a["spdx-3-aipackage", "standardCompliance"] == "declared"
    assert a["gpai-cop-mdf", "distribution"] == "not_claimed"  # the section holds no channel


def test_the_document_shows_each_answer_and_nist_in_its_own_words(sheet):
    page = Page.parse(render_html(sheet))
    # each form's items listed under their answer: item → the answer's words, mark first
    rows = {item: r[0] for t in page.section("coverage").tables() for r in t[1:] for item in r[1].split("; ")}
    assert rows["CBRN information or capabilities"] == "N not assessed by this tool"
    assert rows["value chain and component integration"] == "M evidence in this factsheet"
    assert rows["provider and model names and versions"] == "D declared by the author"
