"""The energy and tuning sections' pictures (factsheet/render/section_pictures.py), each beside the numbers
behind it: present in its section with its alt text and its data table, every number in that table the
factsheet's own (known truth: the fixture's energy windows and the tuner's trace). The predictor's
pictures need a campaign: tests/predictor/test_predictor_section.py checks them."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from factsheet.render import energy_picture, render_html, tuning_pictures
from tests.render.page import Page
from tests.support import sheet_fixture as fx

NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def sheet():
    sheet = fx.build_sheet(fx.load_points())
    return sheet.model_copy(update={"tuning": _thirty_evaluations()})


@pytest.fixture(scope="module")
def page(sheet) -> Page:
    return Page.parse(render_html(sheet))


def _thirty_evaluations():
    tuning = fx.tuning_result()
    trace = [
        e.model_copy(update={"index": i + 1})
        for i in range(30)
        for e in [tuning.trace[i % len(tuning.trace)]]
    ]
    return tuning.model_copy(update={"trace": trace})


def _caption_of(section, number: str) -> list[list[str]]:
    for table in section.iter("table"):
        if table.text.startswith(f"Data of Figure {number}"):
            return [[c.text for c in tr.iter() if c.tag in ("td", "th")] for tr in table.iter("tr")]
    raise KeyError(number)


def _figures(section) -> list[tuple[str, str]]:
    return [(caption, alt) for caption, alt, _ in section.figures()]


def test_energy_is_drawn_over_its_windows_with_each_windows_power_in_the_table(sheet, page):
    en = sheet.energy.energy
    section = page.section("energy")
    ((caption, alt),) = _figures(section)
    assert "The numbers behind it" in caption and alt.startswith("Power over the measured window")
    rows = _caption_of(section, caption.split(".")[0].split()[1])[1:]
    gpu = next(c for c in en.components if getattr(c, "gross", None) is not None)
    idle = next(c for c in en.idle.components if c.component.label == gpu.component.label)
    t0 = en.idle.t_start
    by_series = {r[0]: r for r in rows}
    steady = by_series[f"{gpu.component.label}, steady window"]
    assert steady[2] == f"{gpu.gross.avg_power_w.value:,.1f}"
    assert steady[1] == f"{en.t_start - t0:.1f}–{en.t_end - t0:.1f}"
    assert by_series[f"{gpu.component.label}, idle, before the run"][2] == f"{idle.power_w:,.1f}"
    # the steady window is marked, and nothing unmeasured is drawn (the CPU package says why instead)
    assert f"measured window, {en.duration_s:.1f} s" in alt and "CPU package" not in alt


def test_no_energy_picture_without_an_energy_measurement():
    assert energy_picture(fx.empty_sheet().energy, "x") is None


def test_the_tuners_climb_states_each_evaluations_p99_against_the_slo(sheet, page):
    tuning = sheet.tuning
    section = page.section("tuning")
    figures = _figures(section)
    assert [c.split(". ", 1)[1].split(".")[0] for c, _ in figures] == [
        f"Tuner's climb: p99 {tuning.score.slo_metric} of each evaluation against the SLO",
        "Tuner's climb: goodput of each evaluation",
    ]
    p99_caption, p99_alt = figures[0]
    assert f"SLO: p99 {tuning.score.slo_p99_ms:g} ms" in p99_alt
    rows = _caption_of(section, p99_caption.split(".")[0].split()[1])[1:]
    assert len(rows) == len(tuning.trace)
    for row, e in zip(rows, tuning.trace, strict=True):
        p = e.figures.p99
        assert row[1] == f"#{e.index} {e.point.label()}"  # every operating point named
        assert row[2] == f"{p.value:,.1f}" and row[3] == f"[{p.ci_low:,.1f}, {p.ci_high:,.1f}]"
        assert row[0].endswith("meets SLO" if p.value <= tuning.score.slo_p99_ms else "misses SLO")
    goodput = _caption_of(section, figures[1][0].split(".")[0].split()[1])[1:]
    assert [r[2] for r in goodput] == [f"{e.figures.goodput.value:,.1f}" for e in tuning.trace]


def test_a_thirty_evaluation_climb_has_readable_x_labels():
    p99, _ = tuning_pictures(_thirty_evaluations(), "t")
    svg = ET.fromstring(p99.chart.svg)
    ticks = [t for t in svg.iter(f"{NS}text") if t.get("class") == "x-label"]
    xs = [float(t.get("x")) for t in ticks]
    assert len(ticks) >= 4 and ticks[-1].text == "30"
    widths = [len(t.text) * 0.75 * float(t.get("font-size")) for t in ticks]
    assert all(a + wa / 2 <= b - wb / 2 for a, b, wa, wb in zip(xs, xs[1:], widths, widths[1:], strict=False))
    assert svg.find(f"{NS}desc").text == p99.chart.alt == svg.get("aria-label")
