"""The factsheet read as a reviewer reads it, from a demo-like build (three load points, a capacity search with
its confirmation and repeats, a second workload's search, as many runs as the demo's searches make, a policy
gate, governance declared): the PDF rendered
to images (pdftoppm) within its page budget, the summary within two pages, every summary link resolving in
the HTML and in the PDF, every picture beside the numbers behind it, and the HTML in chromium at 1,280 and
390 px wide without horizontal overflow (a screenshot of each kept under out/test-artifacts/reader/).

System lane: it builds against the mock server and drives a browser."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pypdf
import pytest

from factsheet.document.schema import Factsheet
from tests.render.page import Page
from tests.support.demo_like import DEMO_CAPACITY_RUNS, build_demo_like

pytestmark = [pytest.mark.system, pytest.mark.pdf]

SUMMARY_PAGES = 2
DOCUMENT_PAGES = 12  # issue 43: the whole demo-like document within 12 pages, with the demo's number of runs
ARTIFACTS = Path(__file__).resolve().parents[2] / "out" / "test-artifacts" / "reader"
FIRST_EVIDENCE = "Headline figures: what each rests on"


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return build_demo_like(tmp_path_factory.mktemp("demo-like"))


@pytest.fixture(scope="module")
def pdf(out) -> pypdf.PdfReader:
    return pypdf.PdfReader(out / "factsheet.pdf")


@pytest.fixture(scope="module")
def page(out) -> Page:
    return Page.parse((out / "factsheet.html").read_text(encoding="utf-8"))


def test_the_build_has_the_demos_number_of_runs(out):
    """The page budget is measured on as many runs as the demo's searches make (each search a table of
    runs, a server view a row per run, its raw records one line): probes, confirmations and repeats."""
    sheet = Factsheet.model_validate_json((out / "factsheet.json").read_text(encoding="utf-8"))
    searches = [sheet.load.capacity] + [c.capacity for c in sheet.load.compared_workloads]
    runs = [len(s.result.points) + len(s.repeats.runs) for s in searches]
    assert runs == [11, 10] and sum(runs) == DEMO_CAPACITY_RUNS
    assert all(len(s.repeats.runs) == 2 for s in searches)


def test_the_pdf_renders_to_images_within_its_page_budget(out, pdf, tmp_path):
    if shutil.which("pdftoppm") is None:
        pytest.fail("pdftoppm missing: `make test` installs poppler-utils (make test-system)")
    subprocess.run(
        ["pdftoppm", "-r", "30", "-png", str(out / "factsheet.pdf"), str(tmp_path / "p")], check=True
    )
    images = sorted(tmp_path.glob("p-*.png"))
    assert len(images) == len(pdf.pages) <= DOCUMENT_PAGES
    from PIL import Image

    for image in images:  # every page drawn, none blank
        extrema = Image.open(image).convert("L").getextrema()
        assert extrema[0] < 128, image.name
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(images[0], ARTIFACTS / "pdf-page-1.png")


def test_the_summary_fits_two_pages_and_answers_the_reviewers_questions(pdf):
    texts = [p.extract_text().replace("\n", " ") for p in pdf.pages]
    starts = next(i for i, t in enumerate(texts) if FIRST_EVIDENCE in t)
    assert starts == SUMMARY_PAGES  # the evidence starts on page 3: the summary is pages 1-2
    summary = " ".join(texts[:SUMMARY_PAGES])
    for answer in (
        "What was measured, on what", "Weights digest", "Engine", "Hardware", "Intended use", "Out of scope",
        "holds 24 concurrent users at p99 E2EL ≤ 450 ms", "a rebuild's p99 E2EL stays within", "Policy",
        "the build's gate passed", "Not measured, and why", "Accuracy", "not requested in the build spec",
        "Known limitations", "answers in English only", "Signature", "not signed when rendered",
        "Acceptable use", "demonstrations and tests only", ">= 4 concurrent users (the author's decision threshold",
    ):  # fmt: skip
        assert answer in summary, answer
    assert (
        "latency and throughput at 3 load point(s)" in summary
        and "capacity at SLO for 2 workload(s)" in summary
    )
    # each chart on the page that states its figure: the capacity search and the latency CDF beside the
    # capacity and the p99 E2EL they picture
    (charted,) = [t for t in texts[:SUMMARY_PAGES] if "Figure 1. Capacity search" in t]
    assert "Figure 2. Latency distribution" in charted
    assert "holds 24 concurrent users at p99 E2EL ≤ 450 ms" in charted and "p99 E2EL" in charted


def test_every_summary_link_resolves_in_the_html(page):
    ids = {e.attrs["id"] for e in page.root.iter() if "id" in e.attrs}
    links = [a.attrs["href"] for a in page.section("summary").iter("a")]
    assert len(links) >= 20
    assert [h for h in links if not h.startswith("#") or h[1:] not in ids] == []


def test_every_summary_link_resolves_in_the_pdf(pdf):
    names = _named_destinations(pdf)
    for number in range(SUMMARY_PAGES):
        targets = []
        for annot in pdf.pages[number].get("/Annots") or []:
            a = annot.get_object()
            if a.get("/Subtype") != "/Link":
                continue
            dest = a.get("/Dest") if "/Dest" in a else a.get("/A", {}).get("/D")
            targets.append(dest)
        assert len(targets) >= 10, number
        for dest in targets:  # a named destination that exists, or an explicit page reference
            assert (str(dest) in names) if isinstance(dest, str) else dest is not None, dest


def _named_destinations(pdf: pypdf.PdfReader) -> set[str]:
    return {str(k) for k in pdf.named_destinations}


def test_every_picture_has_its_numbers_beside_it(page, pdf):
    figures = page.root.figures()
    pictured = [(c, a) for c, a, _ in figures if "The numbers behind it" in c]
    assert len(pictured) >= 4  # capacity search, latency CDF, rebuild values, the second workload's search
    tables = {e.attrs["id"]: e for e in page.root.iter("table") if "id" in e.attrs}
    for caption, alt in pictured:
        number = caption.split(".")[0].split()[1]
        table = next(t for t in tables.values() if t.text.startswith(f"Data of Figure {number}"))
        rows = [r for r in table.iter("tr")][1:]
        assert rows, caption
        # every number in the table is in the picture's own description (drawn from the same JSON)
        for value in re.findall(r"\d[\d,]*\.\d", table.text)[:12]:
            assert value.replace(",", "") in alt.replace(",", ""), (caption, value)
    text = "".join(p.extract_text() for p in pdf.pages)
    assert text.count("Data of Figure") == len(pictured)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_html_has_no_horizontal_overflow(out, width):
    from tests.catalogue.catalogue_browser import chromium

    with chromium() as browser:
        tab = browser.new_page(viewport={"width": width, "height": 900})
        tab.goto((out / "factsheet.html").as_uri())
        overflow = tab.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(ARTIFACTS / f"html-{width}px.png"))
        tab.close()
    assert overflow <= 0, f"{overflow} px wider than a {width} px window"
