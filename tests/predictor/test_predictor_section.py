"""The factsheet's predictor section: built from a campaign, validated by the schema, rendered in HTML."""

import pytest

from factsheet.builder.predictor import build_predictor
from factsheet.document.predictor import AccuracyStatement
from factsheet.document.schema import Factsheet
from factsheet.render import render_html
from factsheet.spec.predictor import PredictorSpec
from tests.render.page import Page
from tests.support import sheet_fixture as fx
from tuner.predictor.predict import accuracy_statement

pytestmark = pytest.mark.system


def test_section_from_a_campaign_validates_and_renders(tmp_path):
    spec = PredictorSpec.model_validate(
        {
            "campaign": {
                "feature_model": "vllm_serving",
                "sample": {"method": "uniform", "n": 10, "seed": 4},
                "repetitions": 2,
                "measurer": "tests.support.campaign_measurers:synthetic",
            },
            "targets": ["e2el_p50_ms", "pass_at_1"],
            "constraints": {"e2el_p50_ms": "<=1e9"},
            "verify_repetitions": 2,
        }
    )
    section = build_predictor(spec, tmp_path, log=lambda *_: None)
    assert section.campaign.measurements == 20
    assert section.model.valid_configurations == 594_864
    section = section.model_copy(
        update={"accuracy": AccuracyStatement(**accuracy_statement({"accuracy": {"tasks": 2}}))}
    )
    sheet = fx.build_sheet(fx.load_points()).model_copy(update={"predictor": section})
    sheet = Factsheet.model_validate_json(sheet.model_dump_json())  # round trip through the schema
    html = render_html(sheet)
    assert "594864 valid configurations" in html
    assert "10 configurations × 2 repetitions" in html
    assert "Relative error" in html
    # the model chosen by CV for the recommendation, its 95 % interval and what the interval rests on
    kind = section.targets["e2el_p50_ms"].selection.kind
    pr = section.recommendation.predicted["e2el_p50_ms"]
    assert pr.model == kind and f"Predicts the recommendation: <b>{kind}</b>" in html
    low, high = pr.interval_95
    assert f"{round(pr.mean, 3)} [{round(low, 3)}, {round(high, 3)}]" in html
    assert (
        f"95 % interval from the out-of-fold prediction error of {kind} (5-fold CV, 10 configurations)"
        in html
    )
    assert section.verification["e2el_p50_ms"].within_interval in (True, False)
    # pass_at_1 is noise around a constant: its row states so, and no R² is printed for it.
    p = section.targets["pass_at_1"].learnability.anova_p
    row = html[html.index("<tr><td>pass_at_1</td>") :].split("</tr>")[0]
    assert (
        "not learnable at this model size: varies across configurations no more than its own sampling "
        f"error (ANOVA p={p:.2g})" in row
    )
    # CV rows for the learnable latency only (the appendix lists the raw data, selections included)
    assert html.count("<td></td><td></td><td>random_forest</td>") == 1
    assert "Learning curve, pass_at_1" not in html
    # the two charts: the learning curve of the learnable figure only, the front over every configuration
    curve = section.targets["e2el_p50_ms"].learning_curve
    assert "Learning curve: Random Forest R² on held-out configurations." in html
    alt = html[html.index('alt="Learning curve:') :].split('">')[0]
    assert f"X: configurations measured and used for training ({', '.join(str(c.n) for c in curve)})" in alt
    assert "e2el_p50_ms: " in alt and "pass_at_1" not in alt
    front = section.pareto.front
    assert len(section.pareto.configurations) == 10 and 1 <= len(front) <= 10
    assert "Pareto front of 2 objectives, drawn on e2el_p50_ms and pass_at_1." in html
    assert "X: e2el_p50_ms (minimise); Y: pass_at_1 (maximise). measured: 10 points" in html
    assert f"Pareto front: {len(front)} points" in html
    # each picture beside the numbers behind it: the front's table holds every configuration's means
    page = Page.parse(html).section("predictor")
    tables = {t.attrs["id"]: t for t in page.iter("table") if "id" in t.attrs}
    pareto = tables["data-predictor-pareto"]
    rows = [[c.text for c in tr.iter() if c.tag in ("td", "th")] for tr in pareto.iter("tr")][1:]
    assert pareto.text.startswith("Data of Figure") and len(rows) == len(section.pareto.configurations)
    ids = {r.config_id for r in front}
    for c in section.pareto.configurations:
        row = next(r for r in rows if r[0].endswith(f"({c.config_id})"))
        assert row[0].startswith("Pareto front" if c.config_id in ids else "measured")
        assert row[1] == f"{c.e2el_p50_ms:.4g}" and row[2] == f"{c.pass_at_1:,.4f}"
    curve_rows = [
        [c.text for c in tr.iter() if c.tag == "td"] for tr in tables["data-predictor-curve"].iter("tr")
    ]
    assert [r[2] for r in curve_rows if r] == [f"{c.r2_mean:,.3f}" for c in curve]
    assert sum(1 for caption, _, _ in page.figures() if "The numbers behind it" in caption) == 2
    assert "the first 2 tasks of HumanEval+ in dataset order, one program per task (chat" in html
    assert "graded_plus_share = base and plus test inputs passed" in html


def test_no_section_in_spec_is_not_measured(tmp_path):
    assert build_predictor(None, tmp_path).status == "not_measured"


def test_bad_constraint_in_spec_is_rejected():
    with pytest.raises(ValueError, match="constraints.pass_at_1"):
        PredictorSpec.model_validate(
            {
                "campaign": {"feature_model": "vllm_serving", "measurer": "a:b"},
                "constraints": {"pass_at_1": "> 1"},
            }
        )
