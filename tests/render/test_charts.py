"""The hand-built SVG charts: axes, positions, gaps for missing figures, alt text, valid XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from factsheet.charts import Series, line_chart

NS = "{http://www.w3.org/2000/svg}"


def _svg(chart) -> ET.Element:
    return ET.fromstring(chart.svg)


def _tick_labels(svg: ET.Element) -> list[str]:
    return [t.text for t in svg.iter(f"{NS}text") if t.get("text-anchor") == "end"]


def test_log_axis_spans_whole_decades_with_readable_marks():
    chart = line_chart(
        ["1", "2"], "c", [Series("a", [12.0, 340.0], "#000")], title="T", y_title="ms", log_y=True
    )
    assert _tick_labels(_svg(chart)) == ["10", "20", "50", "100", "200", "500", "1,000"]


def test_linear_axis_starts_at_zero_and_covers_the_maximum():
    chart = line_chart(
        ["1", "2"], "c", [Series("a", [108.0, 423.0], "#000")], title="T", y_title="t", log_y=False
    )
    ticks = [float(t.replace(",", "")) for t in _tick_labels(_svg(chart))]
    assert ticks[0] == 0 and ticks[-1] >= 423 and ticks == sorted(ticks)


def test_larger_values_are_drawn_higher_and_x_follows_the_points():
    values = [5.0, 50.0, 20.0]
    chart = line_chart(
        ["1", "2", "4"], "c", [Series("a", values, "#000")], title="T", y_title="ms", log_y=True
    )
    dots = [(float(c.get("cx")), float(c.get("cy"))) for c in _svg(chart).iter(f"{NS}circle")]
    assert [x for x, _ in dots] == sorted(x for x, _ in dots)
    by_value = [y for _, (_, y) in sorted(zip(values, dots, strict=True))]
    assert by_value == sorted(by_value, reverse=True)  # SVG y grows downwards


def test_missing_figures_leave_gaps_not_zeros():
    series = [
        Series("gap", [10.0, None, 30.0], "#000"),
        Series("tail", [10.0, 20.0, None], "#111", dashed=True),
    ]
    svg = _svg(line_chart(["a", "b", "c"], "x", series, title="T", y_title="ms", log_y=True))
    lines = list(svg.iter(f"{NS}polyline"))
    assert len(lines) == 1 and len(lines[0].get("points").split()) == 2  # only 'tail' has two neighbours
    assert len(list(svg.iter(f"{NS}circle"))) == 2 and len(list(svg.iter(f"{NS}rect"))) == 1 + 2
    assert "gap: 10.0–30.0 (no figure at b); tail: 10.0–20.0 (no figure at c)." in svg.find(f"{NS}desc").text


def test_nothing_to_plot_gives_no_chart():
    assert line_chart(["1"], "x", [Series("a", [None], "#000")], title="T", y_title="ms", log_y=False) is None
    assert line_chart(["1"], "x", [Series("a", [0.0], "#000")], title="T", y_title="ms", log_y=True) is None


def test_title_and_alt_text_are_escaped_and_agree():
    chart = line_chart(
        ["<1>"], "x & y", [Series("p<50>", [3.0], "#000")], title="A & B", y_title="ms", log_y=True
    )
    svg = _svg(chart)
    assert svg.find(f"{NS}title").text == "A & B"
    assert svg.get("aria-label") == svg.find(f"{NS}desc").text == chart.alt
    assert chart.alt.startswith("A & B. Y: ms; X: x & y (<1>). p<50>: 3–3")
