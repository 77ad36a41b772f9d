"""HTML and PDF rendering of a factsheet built from real load runs against the mock server."""

from __future__ import annotations

import base64
import io
import json
import logging
import re
import sys
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

import pypdf
import pytest

from factsheet.render import JSON_NAME, RenderError, json_to_attach, render_all, render_html
from factsheet.schema import Factsheet

sys.path.insert(0, str(Path(__file__).parent))
import sheet_fixture as fx  # noqa: E402

_SVG_IMG = re.compile(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)">')


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


def test_html_shows_every_load_figure_with_its_n(html, sheet):
    for entry in _completed(sheet):
        m = entry.result.metrics
        assert f"Latency at {entry.result.label}" in html
        for metric in ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms"):
            d = getattr(m, metric)
            for q in (50, 90, 95, 99):
                assert f">{d.p(q):,.1f}" in html, (entry.result.label, metric, q)
            assert f'<td class="n">{d.n}</td>' in html
        assert f'<td class="n">{m.completed}</td>' in html
        assert f'<td class="n">{m.output_throughput:,.1f}</td>' in html
        assert f"{m.goodput:,.2f}" in html
        assert f"{100 * m.slo_attainment:.1f} %" in html
        assert entry.records.sha256 in html and entry.result.workload.prompts_digest in html
    assert "E2EL ≤ 120 ms, TTFT ≤ 60 ms" in html
    assert sheet.load.percentile_method in unescape(html)


def test_a_point_where_nothing_completed_shows_no_figures_and_says_why(html, sheet):
    failed = sheet.load.points[2].result
    assert failed.metrics.errors == {"http": 8}
    assert "no rates — no request completed, so there is no steady window (SLO attainment 0 of 8)" in html
    assert html.count("no samples — nothing completed") == 4  # TTFT, ITL, E2EL and TPOT of that point
    assert "Failed requests by cause: http 8." in html
    assert f"Open-loop arrivals: target {failed.point.rate:g} req/s" in html


def test_html_flags_p99_figures_resting_on_too_few_samples(html, sheet):
    flagged = [e for e in _completed(sheet) if e.result.metrics.insufficient_samples]
    # 12 and 28 requests are far below the 459+ MLPerf early stopping asks for a p99 at 99 %.
    assert len(flagged) == 2
    assert html.count("Insufficient samples: </strong>") == len(flagged)
    assert "2 point(s) with p99 figures resting on too few samples" in html  # the failed point has none
    needed = flagged[0].result.metrics.sample_sufficiency["e2el_ms"].n_required
    assert f"needs ≥ {needed}" in html


def test_html_states_every_not_measured_reason(html):
    for reason in (
        fx.PREDICTOR_REASON,
        "RAPL not readable: permission denied",
        "serving environment not inspected (test)",
        "no grid carbon intensity",
    ):
        assert reason in html


def test_unmeasured_sections_say_why_instead_of_showing_figures():
    html = render_html(fx.empty_sheet())
    for reason in (
        "target did not answer (test)",
        "not requested in the build spec",
        "energy not requested (test)",
        "tuning not requested (test)",
        fx.PREDICTOR_REASON,
    ):
        assert f"<strong>Not measured — </strong>{reason}" in html
    assert "data:image/svg+xml" not in html and " ms</td>" not in html


def test_measured_sections_show_their_figures(html, sheet):
    acc = sheet.accuracy.result
    assert "50.0 %" in html and "HumanEval/1" in html and acc.dataset.sha256 in html
    total = sheet.energy.energy.total
    assert f"{total.gross.energy_j.value:.4g}" in html
    assert f"{total.gross.j_per_output_token.value:.4g}" in html
    tuning = sheet.tuning
    assert tuning.justification in html
    assert html.count("<td>simulator</td>") == len(tuning.trace) + 2  # trace plus default/recommended
    assert sheet.provenance.spec_sha256 in html and sheet.provenance.git_commit in html


def test_estimates_are_labelled_and_kept_out_of_the_total(html, sheet):
    energy = sheet.energy.energy
    (estimate,) = energy.estimated
    assert estimate.basis == "estimated" and estimate.component.label not in energy.total.included
    assert html.count('<span class="estimate-tag">ESTIMATE</span>') == 1
    assert f"{estimate.gross.energy_j.value:.4g}" in html and unescape(estimate.component.method) in unescape(
        html
    )


def test_served_weights_are_identified(html):
    assert fx.SERVED.digests["model.safetensors"] in html and "mock-7b.Q8_0.gguf" in html


def test_text_is_escaped(sheet):
    html = render_html(sheet.model_copy(update={"name": "<script>alert(1)</script>"}))
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_charts_are_svg_images_with_alt_text(html, sheet):
    images = _SVG_IMG.findall(html)
    assert len(images) == 3  # two load charts, then the tuning trajectory
    assert "Tuning trajectory" in images[2][1]
    for data, alt in images[:2]:
        svg = ET.fromstring(base64.b64decode(data))
        ns = "{http://www.w3.org/2000/svg}"
        assert svg.get("role") == "img" and svg.get("aria-label")
        assert svg.find(f"{ns}title").text in alt
        assert svg.find(f"{ns}desc").text == unescape(alt)
        assert "(c = closed-loop concurrency, /s = open-loop rate) (c=1, c=4, 200/s)" in alt
    latency_alt = images[0][1]
    ttft = [e.result.metrics.ttft_ms.p(50) for e in _completed(sheet)]
    assert "TTFT p50" in latency_alt and "E2EL p99" in latency_alt
    assert f"{min(ttft):.1f}" in latency_alt and f"{max(ttft):.1f}" in latency_alt


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
