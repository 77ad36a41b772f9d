"""Learning and decisions on a campaign whose truth is known (tests/support/campaign_measurers.py):
latency is a function of max_new_tokens, num_beams and temperature; pass@1 is constant plus noise."""

import pandas as pd
import pytest

from tests.support.campaign_measurers import Synthetic
from tuner.campaign.runner import run_campaign
from tuner.campaign.spec import CampaignSpec
from tuner.features.configs import load_bundled
from tuner.features.space import FeatureSpace
from tuner.predictor.decide import pareto_mask, recommend, verify
from tuner.predictor.learn import evaluate

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> pd.DataFrame:
    spec = CampaignSpec.model_validate(
        {
            "feature_model": "generation_config",
            "sample": {"method": "twise", "t": 2, "seed": 0},
            "extra_uniform": 20,
            "repetitions": 3,
            "measurer": "tests.support.campaign_measurers:synthetic",
        }
    )
    return run_campaign(spec, tmp_path_factory.mktemp("campaign") / "c").table()


def test_forest_learns_latency_and_beats_baselines(table):
    res = evaluate(table, ["e2el_p50_ms"], k=5, curve_sizes=(10, 40), curve_repeats=3)
    lat = res["e2el_p50_ms"]
    assert lat["learnability"]["learnable"] is True
    # multiplicative truth (tokens x beams x temperature): the forest beats the linear model and the mean
    assert lat["cv"]["random_forest"]["r2"]["mean"] > 0.75
    assert lat["cv"]["random_forest"]["r2"]["mean"] > lat["cv"]["ridge"]["r2"]["mean"]
    assert lat["cv"]["mean"]["r2"]["mean"] < 0.05
    assert lat["cv"]["random_forest"]["mae"]["mean"] < lat["cv"]["mean"]["mae"]["mean"]
    assert lat["cv"]["random_forest"]["r2"]["sd"] is not None  # spread over folds is reported
    top = {i["feature"] for i in lat["importance"][:4]}
    assert top & {
        "max_new_tokens_32",
        "max_new_tokens_128",
        "NumBeams",
        "num_beams_4",
        "Temperature",
        "DoSample",
    }
    curve = lat["learning_curve"]
    assert [c["n"] for c in curve] == [10, 40] and curve[1]["r2_mean"] > curve[0]["r2_mean"]


def test_constant_accuracy_is_reported_not_learnable(table):
    res = evaluate(table, ["pass_at_1", "energy_j"], k=3, curve_sizes=(), curve_repeats=1)
    assert res["pass_at_1"]["status"] == "not_learnable"
    assert res["pass_at_1"]["learnability"]["anova_p"] > 0.05
    assert res["energy_j"]["status"] == "not_measured"


def test_pareto_mask_on_known_points():
    pts = pd.DataFrame({"lat": [1, 2, 3, 2], "acc": [0.1, 0.5, 0.4, 0.05]})
    assert list(pareto_mask(pts, {"lat": "min", "acc": "max"})) == [True, True, False, False]


def test_recommendation_meets_constraints_and_is_verified(table):
    space = FeatureSpace(load_bundled("generation_config"))
    rec = recommend(
        table,
        space,
        objective="e2el_p50_ms",
        constraints={"cpu_s": (">=", 0.0)},
        targets=["e2el_p50_ms", "cpu_s"],
        candidates=500,
    )
    assert rec is not None and rec["predicted"]["cpu_s"]["mean"] >= 0
    assert "max_new_tokens_32" in rec["features"]  # the truth: shortest generation, no beams
    assert rec["kwargs"]["request"].get("num_beams", 1) == 1
    check = verify(rec, Synthetic(), repetitions=3)
    assert abs(check["e2el_p50_ms"]["relative_error"]) < 0.15
    impossible = recommend(
        table,
        space,
        objective="e2el_p50_ms",
        constraints={"cpu_s": ("<=", -1.0)},
        targets=["e2el_p50_ms"],
        candidates=200,
    )
    assert impossible is None
    low, high = rec["predicted"]["e2el_p50_ms"]["interval_95"]
    assert low < rec["predicted"]["e2el_p50_ms"]["mean"] < high
    assert check["e2el_p50_ms"]["within_interval"] is True  # 2 % noise around the truth
