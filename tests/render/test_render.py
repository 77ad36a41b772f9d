"""HTML and PDF rendering of a factsheet built from real load runs against the mock server.

Assertions read the page as a reader does (sections, headings, table cells, figures, text: page.py),
not its markup, so a designer can restyle the templates without rewriting these tests."""

from __future__ import annotations

import base64
import io
import json
import logging
import xml.etree.ElementTree as ET

import pypdf
import pytest

from factsheet.document.files import FACTSHEET_JSON as JSON_NAME
from factsheet.document.schema import Factsheet
from factsheet.render import RenderError, json_to_attach, render_all, render_html
from tests.render.page import Page
from tests.support import sheet_fixture as fx

pytestmark = pytest.mark.pdf


@pytest.fixture(scope="module")
def sheet() -> Factsheet:
    return fx.build_sheet(fx.load_points())


@pytest.fixture(scope="module")
def rendered(sheet, tmp_path_factory):
    """Render once per module; weasyprint's warnings (CSS it could not use) are kept for a test."""
    warnings: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warnings.append(record.getMessage())

    handler = _Keep(level=logging.WARNING)
    logging.getLogger("weasyprint").addHandler(handler)
    try:
        out = tmp_path_factory.mktemp("factsheet")
        paths = render_all(sheet, out)
    finally:
        logging.getLogger("weasyprint").removeHandler(handler)
    return out, paths, warnings


@pytest.fixture(scope="module")
def html(rendered) -> str:
    return (rendered[0] / "factsheet.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(html) -> Page:
    return Page.parse(html)


@pytest.fixture(scope="module")
def pdf(rendered) -> pypdf.PdfReader:
    return pypdf.PdfReader(io.BytesIO((rendered[0] / "factsheet.pdf").read_bytes()))


def _completed(sheet):
    return [e for e in sheet.load.points if e.result.metrics.completed]


def test_mock_server_timing_is_what_the_figures_rest_on(sheet):
    # Known truth from the mock servers: TTFT 40 ms, ITL 4 ms, 8 tokens per reply; the last fails all.
    assert len(_completed(sheet)) == 2 and sheet.load.points[2].result.metrics.failed == 8
    for entry in _completed(sheet):
        m = entry.result.metrics
        assert m.failed == 0 and m.completed == entry.result.sent - entry.result.point.warmup_requests
        # Lower bounds are the server's; upper bounds leave room for a busy shared machine.
        assert 40.0 <= m.ttft_ms.p(50) < 150.0
        assert 3.5 <= m.tpot_ms.p(50) < 20.0


def test_render_all_writes_the_json_first_then_html_and_pdf(rendered, sheet):
    out, paths, _ = rendered
    assert [p.name for p in paths] == ["factsheet.json", "factsheet.html", "factsheet.pdf"]
    assert all(p.parent == out and p.stat().st_size > 0 for p in paths)
    assert paths[0].read_bytes() == sheet.model_dump_json(indent=2).encode()
    # Raw records are excluded from the JSON (they live in records/), so compare the serialised form.
    assert (
        Factsheet.model_validate_json(paths[0].read_bytes()).model_dump_json(indent=2) == paths[0].read_text()
    )
    assert paths[0].stat().st_mtime_ns <= paths[1].stat().st_mtime_ns <= paths[2].stat().st_mtime_ns


def _row(table: list[list[str]], first: str) -> list[str]:
    (row,) = [r for r in table if r and r[0].startswith(first)]
    return row


def test_sections_come_in_order_with_their_headings(page):
    assert page.section_ids() == [
        "summary", "headline", "identity", "system", "load", "accuracy", "energy", "tuning", "predictor",
        "compliance", "coverage", "definitions", "provenance",
    ]  # fmt: skip
    assert page.section("load").headings()[:5] == [
        "3. Load, latency and goodput",
        "Service-level objective",
        "Capacity at SLO",
        "Throughput and goodput per load point",
        "p99 check per load point",
    ]
    assert "Capacity at SLO" in page.section("load").headings()
    assert page.section("tuning").headings()[0] == "6. Tuning"


def test_html_shows_every_load_figure_with_its_n(page, html, sheet):
    load = page.section("load")
    throughput = load.table_after("Throughput and goodput per load point")
    for entry in _completed(sheet):
        m = entry.result.metrics
        latency = load.table_after("Latency by load point")  # one table, a row per point and metric
        assert latency[0][:9] == ["Load point", "Metric", "n", "mean", "p50", "p90", "p95", "p99", "max"]
        for metric, name in (
            ("ttft_ms", "TTFT"),
            ("tpot_ms", "TPOT"),
            ("itl_ms", "ITL"),
            ("e2el_ms", "E2EL"),
        ):
            d = getattr(m, metric)
            row = next(r for r in latency if r[:2] == [entry.result.label, f"{name} ms"])
            assert row[2] == str(d.n)
            for col, q in zip((4, 5, 6, 7), (50, 90, 95, 99), strict=True):
                assert row[col].split(" [")[0] == f"{d.p(q):,.1f}", (entry.result.label, metric, q)
        row = _row(throughput, entry.result.label)
        assert row[3] == str(m.completed) and row[7] == f"{m.output_throughput:,.1f}"
        assert row[8].startswith(f"{m.goodput:,.2f}")
        assert row[9].startswith(f"{100 * m.slo_attainment:.1f} %")
        prompts = (
            entry.result.workload.prompts_digest
        )  # with its records: its start shown, whole in the title
        assert prompts.rpartition(":")[2][:12] in page.section("provenance").text
        assert f'title="{prompts}"' in html
        # raw-record listings last: each file by name with its record count and its digest's start (the whole
        # digest in the HTML's title, and in factsheet.json)
        # (the group's files after the start their paths share: "records/load-…: 01.jsonl (12, 3aa7a15575cc…)")
        path, digest = entry.records.path, entry.records.sha256.rpartition(":")[2]
        listing = page.section("provenance").text
        assert any(
            f"{path[:k]}…:" in listing and f"{path[k:]} ({entry.records.records}, {digest[:12]}…)" in listing
            for k in range(1, len(path))
        )
        assert f'title="{entry.records.sha256}"' in html
    assert "E2EL ≤ 120 ms, TTFT ≤ 60 ms" in load.text
    assert sheet.load.percentile_method in load.text


def test_a_point_where_nothing_completed_shows_no_figures_and_says_why(page, sheet):
    failed = sheet.load.points[2].result
    assert failed.metrics.errors == {"http": 8}
    text = page.section("load").text
    assert "no rates — no request completed, so there is no steady window (SLO attainment 0 of 8)" in text
    assert text.count("no samples — nothing completed") == 4  # TTFT, ITL, E2EL and TPOT of that point
    assert "Failed requests by cause: http 8." in text
    assert f"Open-loop arrivals: target {failed.point.rate:g} req/s" in text


def test_html_flags_p99_figures_resting_on_too_few_samples(page, sheet):
    flagged = [e for e in _completed(sheet) if e.result.metrics.insufficient_samples]
    # 12 and 28 requests are far below the 459+ MLPerf early stopping asks for a p99 at 99 %.
    assert len(flagged) == 2
    # one flag names every such point with its metrics (the same words once, not a box per point)
    (flag,) = [e.text for e in page.section("load").iter("div") if e.text.startswith("Insufficient samples")]
    assert all(f"at {e.result.label}" in flag for e in flagged)
    assert "2 point(s) with p99 figures resting on too few samples" in page.section("summary").text
    needed = flagged[0].result.metrics.sample_sufficiency["e2el_ms"].n_required
    check = page.section("load").table_after("p99 check per load point")
    assert (
        _row(check, flagged[0].result.label)[-1]
        == f"insufficient samples (n = 12, needs ≥ {needed}; 0 above threshold)"
    )


def test_html_states_every_not_measured_reason(page):
    for reason in (
        fx.PREDICTOR_REASON,
        "RAPL not readable: permission denied",
        "serving environment not inspected (test)",
        "no grid carbon intensity",
    ):
        assert reason in page.text


def test_unmeasured_sections_say_why_instead_of_showing_figures():
    page = Page.parse(render_html(fx.empty_sheet()))
    for section, reason in (
        ("load", "target did not answer (test)"),
        ("accuracy", "not requested in the build spec"),
        ("energy", "energy not requested (test)"),
        ("tuning", "tuning not requested (test)"),
        ("predictor", fx.PREDICTOR_REASON),
    ):
        assert f"Not measured — {reason}" in page.section(section).text
    assert page.root.figures() == [] and " ms" not in page.section("load").text


def test_measured_sections_show_their_figures(page, sheet):
    acc = sheet.accuracy.result
    accuracy = page.section("accuracy").text
    assert "50.0 %" in accuracy and "HumanEval/1" in accuracy and acc.dataset.sha256 in accuracy
    total = sheet.energy.energy.total
    energy = page.section("energy").text
    assert f"{total.gross.energy_j.value:.4g}" in energy
    assert f"{total.gross.j_per_output_token.value:.4g}" in energy
    tuning = sheet.tuning
    section = page.section("tuning")
    assert tuning.justification in section.text
    cells = [c for t in section.tables() for r in t for c in r]
    assert cells.count("simulator") == len(tuning.trace) + 2  # trace plus default/recommended
    prov = page.section("provenance").text
    assert sheet.provenance.spec_sha256 in prov and sheet.provenance.git_commit in prov


def test_estimates_are_labelled_and_kept_out_of_the_total(page, sheet):
    energy = sheet.energy.energy
    (estimate,) = energy.estimated
    assert estimate.basis == "estimated" and estimate.component.label not in energy.total.included
    section = page.section("energy")
    assert "Estimates ESTIMATE — NOT A MEASUREMENT" in section.headings()
    rows = section.table_after("Estimates")
    row = _row(rows, estimate.component.label)
    assert row[0] == f"{estimate.component.label} ESTIMATE"
    assert row[1].startswith(f"{estimate.gross.energy_j.value:.4g}") and row[-1] == estimate.component.method
    assert not any(r[0].startswith(estimate.component.label) for r in section.table_after("Per component"))


def test_served_weights_are_identified(page):
    identity = page.section("identity").text
    assert fx.SERVED.digests["model.safetensors"] in identity and "mock-7b.Q8_0.gguf" in identity


def test_text_is_escaped(sheet):
    html = render_html(sheet.model_copy(update={"name": "<script>alert(1)</script>"}))
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_charts_are_numbered_svg_images_with_alt_text(page, sheet):
    figures = page.root.figures()
    # The summary's latency distribution of the headline run, two load charts, power over the energy
    # window, then the tuner's climb (p99 against the SLO, goodput).
    assert len(figures) == 6
    assert [c.split(".")[0] for c, _, _ in figures] == [f"Figure {i}" for i in range(1, 7)]
    assert figures[0][0].startswith("Figure 1. Latency distribution (CDF through its stated percentiles) of")
    assert figures[3][1].startswith("Power over the measured window")
    assert "Tuner's climb: p99" in figures[4][1] and "Tuner's climb: goodput" in figures[5][1]
    assert len(page.section("summary").figures()) == 1 and len(page.section("energy").figures()) == 1
    assert len(page.section("load").figures()) == 2 and len(page.section("tuning").figures()) == 2
    for _, alt, src in figures[1:3]:
        assert src.startswith("data:image/svg+xml;base64,")
        svg = ET.fromstring(base64.b64decode(src.split(",", 1)[1]))
        ns = "{http://www.w3.org/2000/svg}"
        assert svg.get("role") == "img" and svg.get("aria-label")
        assert svg.find(f"{ns}title").text in alt
        assert svg.find(f"{ns}desc").text == alt
        assert "(c = closed-loop concurrency, /s = open-loop rate) (c=1, c=4, 200/s)" in alt
    latency_alt = figures[1][1]
    ttft = [e.result.metrics.ttft_ms.p(50) for e in _completed(sheet)]
    assert "TTFT p50" in latency_alt and "E2EL p99" in latency_alt
    assert f"{min(ttft):.1f}" in latency_alt and f"{max(ttft):.1f}" in latency_alt


def test_every_section_is_a_partial_built_from_the_one_macros_file():
    from factsheet.render import SECTIONS
    from factsheet.resources import TEMPLATES, package_data

    templates = package_data(TEMPLATES)
    for name in SECTIONS:
        source = templates.joinpath("sections", f"{name}.html.j2").read_text(encoding="utf-8")
        assert "{% macro" not in source, name  # building blocks live in macros.html.j2 only
        if name != "masthead":
            assert '{% import "macros.html.j2" as m %}' in source, name
    frame = templates.joinpath("factsheet.html.j2").read_text(encoding="utf-8")
    assert len(frame.splitlines()) < 40 and "{% macro" not in frame


def test_pdf_has_the_name_figures_and_page_numbers(pdf, sheet):
    pages = len(pdf.pages)
    assert pages >= 2
    first = pdf.pages[0].extract_text()
    assert fx.NAME in first and f"page 1 of {pages}" in first
    text = "".join(p.extract_text() for p in pdf.pages)
    last = pdf.pages[-1].extract_text()
    assert f"page {pages} of {pages}" in last and fx.NAME in last  # running header and footer
    assert f"spec {sheet.provenance.spec_sha256[:19]}" in last
    e2el_p99 = sheet.load.points[0].result.metrics.e2el_ms.p(99)
    assert f"{e2el_p99:,.1f}" in text


def test_pdf_carries_the_json_it_was_rendered_from(pdf, rendered):
    out = rendered[0]
    assert list(pdf.attachments) == [JSON_NAME]
    assert pdf.attachments[JSON_NAME] == [(out / JSON_NAME).read_bytes()]
    assert json.loads(pdf.attachments[JSON_NAME][0])["name"] == fx.NAME


def test_weasyprint_used_all_the_css(rendered):
    assert rendered[2] == []


def test_rerender_in_place_attaches_the_json_file_as_written(sheet, tmp_path):
    as_written = json.dumps(
        json.loads(sheet.model_dump_json()), indent=4
    ).encode()  # same sheet, other layout
    (tmp_path / JSON_NAME).write_bytes(as_written)
    paths = render_all(sheet, tmp_path, write_json=False)
    assert [p.name for p in paths] == ["factsheet.html", "factsheet.pdf"]
    assert pypdf.PdfReader(paths[1]).attachments[JSON_NAME] == [as_written]
    assert (tmp_path / JSON_NAME).read_bytes() == as_written


def test_a_json_file_of_another_factsheet_is_not_attached(sheet, tmp_path):
    canonical = sheet.model_dump_json(indent=2).encode()
    assert json_to_attach(sheet, tmp_path / JSON_NAME) == canonical  # missing
    (tmp_path / JSON_NAME).write_bytes(b'{"not": "a factsheet"}')
    assert json_to_attach(sheet, tmp_path / JSON_NAME) == canonical
    other = sheet.model_copy(update={"name": "another sheet"}).model_dump_json(indent=2).encode()
    (tmp_path / JSON_NAME).write_bytes(other)
    assert json_to_attach(sheet, tmp_path / JSON_NAME) == canonical


def test_output_folder_that_is_a_file_is_refused(sheet, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(RenderError, match="not a folder"):
        render_all(sheet, target)
