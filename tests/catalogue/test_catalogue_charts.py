"""The trend charts' additions to factsheet/render/charts.py: interval bars that the axis spans, rings on marked
points, both said in the text alternative's terms."""

from __future__ import annotations

import re

import pytest

from factsheet.render import Series, line_chart

pytestmark = pytest.mark.system


def test_intervals_and_marks_are_drawn_and_described():
    s = Series(
        "p99 E2EL",
        [60.0, None, 140.0],
        "#a8411f",
        intervals=[(55.0, 70.0), None, (120.0, 400.0)],
        marked=[False, False, True],
    )
    chart = line_chart(
        ["1", "2", "3"], "build", [s], title="p99 E2EL across builds", y_title="ms", log_y=False,
        x_names=["build 1", "build 2", "build 3"],
    )  # fmt: skip
    assert chart is not None
    assert chart.svg.count('class="interval"') == 2  # no bar where there is no interval
    assert chart.svg.count('class="marked"') == 1
    ticks = [
        float(t.replace(",", "")) for t in re.findall(r'text-anchor="end" fill="#333">([\d,.]+)<', chart.svg)
    ]
    assert max(ticks) >= 400.0  # the axis spans the widest interval, not just the values
    assert "no figure at build 2" in chart.alt and "marked: build 3" in chart.alt


def test_series_without_intervals_draw_as_before():
    plain = Series("goodput", [1.0, 2.0], "#2e7d32")
    chart = line_chart(["1", "2"], "build", [plain], title="t", y_title="req/s", log_y=False)
    assert 'class="interval"' not in chart.svg and 'class="marked"' not in chart.svg
