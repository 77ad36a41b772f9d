"""The judge's parity figure in the factsheet is the one the parity bench measured."""

import json
from pathlib import Path

import pytest

from probes.accuracy.parity import EVALPLUS_PARITY
from tests.support import sheet_fixture as fx

pytestmark = pytest.mark.system

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "humaneval_parity_results.md"


def test_parity_constant_is_the_bench_record():
    line = next(x for x in RESULTS.read_text().splitlines() if x.startswith("PARITY_RECORD "))
    record = json.loads(line.removeprefix("PARITY_RECORD "))
    stated = EVALPLUS_PARITY
    assert record == {
        "date": stated.measured_on,
        "reference": stated.reference,
        "samples": stated.samples,
        "samples_counted": stated.samples_counted,
        "verdicts": stated.verdicts,
        "verdicts_agreeing": stated.verdicts_agreeing,
    }
    assert stated.verdicts == 2 * stated.samples_counted and stated.verdicts_agreeing <= stated.verdicts


def test_accuracy_section_states_the_parity():
    from factsheet.render import render_html

    sheet = fx.build_sheet(fx.load_points())
    stated = sheet.model_copy(deep=True)
    stated.accuracy.result.judge_parity = EVALPLUS_PARITY
    html = render_html(stated)
    p = EVALPLUS_PARITY
    assert f"{p.verdicts_agreeing} of {p.verdicts} verdicts agree" in html and p.measured_on in html
    assert "Parity with EvalPlus" in render_html(sheet) and "not stated" in render_html(sheet)
