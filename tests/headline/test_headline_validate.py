"""The headline is recomputed by `validate` from the rest of the sheet: the figures a builder states pass,
a hand-edited one is exit 1 naming it (known truth: the 1.0.0 fixture, built against the mock server, with
the headline this tool computes from it written in)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.headline.figures import headline
from factsheet.rederive.validate import load_factsheet

FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0"
runner = CliRunner()


@pytest.fixture
def stated(tmp_path) -> Path:
    """The fixture with its computed headline stated."""
    shutil.copytree(FIXTURE, tmp_path / "sheet")
    path = tmp_path / "sheet" / "factsheet.json"
    doc = json.loads(path.read_text())
    doc["headline"] = headline(load_factsheet(path)).model_dump(mode="json")
    path.write_text(json.dumps(doc))
    return path


def _edit(path: Path, i: int, key: str, value) -> str:
    doc = json.loads(path.read_text())
    figure = doc["headline"]["figures"][i]
    figure[key] = value
    path.write_text(json.dumps(doc))
    return figure["id"]


def test_the_stated_headline_validates(stated):
    result = runner.invoke(app, ["validate", str(stated)])
    assert result.exit_code == 0, result.output
    assert "headline: every page-1 figure recomputes from the rest of the sheet" in result.output


def test_the_fixture_headline_is_as_the_sheet_states():
    sheet = load_factsheet(FIXTURE / "factsheet.json")
    h = headline(sheet)
    cap = h.figure("capacity_at_slo")
    assert cap.value == sheet.load.capacity.result.capacity and cap.source.startswith(
        "/load/capacity/result/"
    )
    # Every probe up to the search's maximum (8) passed: a lower bound, never a plain value.
    assert (cap.value, cap.verdict, cap.lower_bound) == (8, "lower_bound", True)
    assert cap.note == "≥ 8 (every probe up to the search's maximum passed)"
    # No confirmation ran: the run figures are the headline load point's (most requests completed).
    e2el = h.figure("e2el_ms.p99")
    assert e2el.source == "/load/points/1/result/metrics" and "headline load point" in e2el.run
    assert e2el.value == sheet.load.points[1].result.metrics.e2el_ms.p(99)
    assert [f.id for f in h.figures] == [
        "capacity_at_slo", "e2el_ms.p99", "ttft_ms.p99", "tpot_ms.p99", "goodput", "slo_attainment",
        "pass_at_1", "energy_wh_per_1000_requests",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("i", "key", "value"),
    [(0, "value", 99.0), (4, "value", 99.0), (1, "verdict", "sufficient"), (0, "lower_bound", False)],
)
def test_an_edited_headline_figure_is_exit_1_naming_it(stated, i, key, value):
    current = json.loads(stated.read_text())["headline"]["figures"][i][key]
    assert current != value  # the edit changes something
    figure = _edit(stated, i, key, value)
    result = runner.invoke(app, ["validate", str(stated)])
    assert result.exit_code == 1, result.output
    assert f"headline.figures[{i}].{key}" in result.output and f"page-1 figure {figure}" in result.output
