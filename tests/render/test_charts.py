"""The hand-built SVG charts: axes, positions, gaps for missing figures, alt text, valid XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from factsheet.render import Points, Series, line_chart, scatter_chart

NS = "{http://www.w3.org/2000/svg}"


def _svg(chart) -> ET.Element:
    return ET.fromstring(chart.svg)


def _tick_labels(svg: ET.Element) -> list[str]:
    """The y-axis labels (right-aligned, not tilted)."""
    return [t.text for t in svg.iter(f"{NS}text") if t.get("text-anchor") == "end" and not t.get("transform")]


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


def test_scatter_places_points_by_both_values_and_drops_what_a_log_axis_cannot_show():
    pts = [(10.0, 1.0), (100.0, 3.0), (1000.0, 2.0), (0.0, 5.0)]  # x = 0 has no place on a log axis
    chart = scatter_chart(
        [Points("all", pts, "#999"), Points("front", [(10.0, 1.0)], "#a00")],
        title="T", x_title="ms", y_title="s", log_x=True, log_y=False,
    )  # fmt: skip
    svg = _svg(chart)
    dots = [(float(c.get("cx")), float(c.get("cy"))) for c in svg.iter(f"{NS}circle")][:3]
    xs, ys = [x for x, _ in dots], [y for _, y in dots]
    assert xs == sorted(xs) and xs[1] - xs[0] == pytest.approx(xs[2] - xs[1])  # one decade, one step
    assert ys[1] < ys[2] < ys[0]  # 3 drawn highest, then 2, then 1 (SVG y grows downwards)
    assert (
        "all: 3 points, x 10.0–1,000.0, y 1–3; front: 1 points, x 10.0–10.0, y 1–1."
        in svg.find(f"{NS}desc").text
    )
    assert scatter_chart([Points("a", [(0.0, 1.0)], "#000")], title="T", x_title="x", y_title="y",
                         log_x=True, log_y=False) is None  # fmt: skip


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


def _x_tick_texts(svg: ET.Element) -> list[ET.Element]:
    return [t for t in svg.iter(f"{NS}text") if t.get("class") == "x-label"]


def _extents(svg: ET.Element) -> list[tuple[float, float]]:
    """Horizontal extent of every upright x label, at a generous 0.75 em a glyph (independent of the
    chart's own estimate), or the footprint of a tilted one along the axis (its line height / sin 45°)."""
    out = []
    for t in _x_tick_texts(svg):
        size = float(t.get("font-size"))
        if "rotate" in (t.get("transform") or ""):
            x = float(t.get("transform").split("(")[1].split()[0])
            out.append((x - size * 1.2 / 0.707 / 2, x + size * 1.2 / 0.707 / 2))
        else:
            x, w = float(t.get("x")), len(t.text) * 0.75 * size
            out.append((x - w / 2, x + w / 2))
    return sorted(out)


@pytest.mark.parametrize("n", [2, 5, 12, 26, 30, 60])
def test_long_category_labels_never_overlap(n):
    labels = [f"#{i} c16/m32/k2" for i in range(n)]
    chart = line_chart(labels, "x", [Series("a", [1.0] * n, "#000")], title="T", y_title="y", log_y=False)
    spans = _extents(_svg(chart))
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), spans
    assert _x_tick_texts(_svg(chart))[-1].text == labels[-1]
