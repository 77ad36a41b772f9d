"""The reviewer's first page: headline figures with their CIs or sufficiency, each linking to its section,
and the reason wherever a figure is absent — on a fully measured sheet and on one where nothing was."""

from __future__ import annotations

from factsheet.render import render_html
from factsheet.render.glance import glance_rows
from tests.support import sheet_fixture as fx

LABELS = [
    "Capacity at SLO", "Goodput", "p99 E2EL", "pass@1", "Energy per 1,000 requests", "Tuner recommendation",
    "Compliance",
]  # fmt: skip


def test_measured_sheet_headline_figures():
    sheet = fx.build_sheet(fx.load_points())
    rows = {r.label: r for r in glance_rows(sheet)}
    assert list(rows) == LABELS
    assert {r.href for r in rows.values()} <= {"#load", "#accuracy", "#energy", "#tuning", "#compliance"}
    assert "95 % CI" in rows["Goodput"].detail and "headline load point" in rows["Goodput"].detail
    assert rows["p99 E2EL"].value.endswith(" ms") and "95 % CI" in rows["p99 E2EL"].detail
    assert rows["pass@1"].value.endswith("%") and "Clopper–Pearson" in rows["pass@1"].detail
    assert rows["Energy per 1,000 requests"].status != "nm"
    assert (
        rows["Capacity at SLO"].status == "nm"
        and rows["Capacity at SLO"].detail == "not requested in the build spec"
    )
    assert rows["Compliance"].value == "no policy run"
    html = render_html(sheet)
    for label, row in rows.items():
        assert f'<a href="{row.href}">{label}</a>' in html


def test_nothing_measured_says_why():
    rows = glance_rows(fx.empty_sheet())
    assert all(r.status == "nm" and r.detail for r in rows), rows
    assert rows[1].detail == "target did not answer (test)"
