"""The model a recommendation predicts with: per figure the candidate that cross-validates best, its 95 %
interval from its own out-of-fold error; on a campaign table whose truth is known (a product of options'
effects, y = 10 · 2^a · 3^b · 1.5^c · 1.4^d), and its verification against known measurements."""

import random

import numpy as np
import pandas as pd
import pytest

from tuner.features.configs import load_bundled
from tuner.features.space import FeatureSpace
from tuner.predictor.decide import recommend, verify
from tuner.predictor.learn import CANDIDATES, cross_validate, evaluate, per_config, select_model

pytestmark = pytest.mark.system

EFFECTS = {
    "max_new_tokens_128": 2.0,
    "num_beams_4": 3.0,
    "CacheImplementation": 1.5,
    "RepetitionPenalty": 1.4,
}


def latency(config) -> float:
    """The truth: each option multiplies the latency; the fastest configuration has none of them (10 ms)."""
    return 10.0 * float(np.prod([v for f, v in EFFECTS.items() if f in config]))


def quality(config) -> float:
    """The truth of a second figure: only the longest generation reaches 0.7, everything else 0.2."""
    return 0.2 + 0.5 * ("max_new_tokens_128" in config)


@pytest.fixture(scope="module")
def space() -> FeatureSpace:
    return FeatureSpace(load_bundled("generation_config"))


@pytest.fixture(scope="module")
def table(space) -> pd.DataFrame:
    configs = space.uniform(random.Random(0), 60)
    features = sorted({f for c in configs for f in c})
    noise = np.random.default_rng(0)
    rows = []
    for i, c in enumerate(configs):
        for rep in range(2):  # 3 % multiplicative noise on latency, ±0.01 on quality
            row = {"config_id": f"c{i}", "repetition": rep}
            row["e2el_p50_ms"] = latency(c) * np.exp(noise.normal(0, 0.03))
            row["quality"] = quality(c) + noise.normal(0, 0.01)
            row.update({f"f:{f}": int(f in c) for f in features})
            rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def selection(table) -> dict:
    return select_model(*per_config(table, "e2el_p50_ms"), k=5, seed=0)


def test_a_product_of_effects_selects_a_log_model_with_its_error_in_log_space(selection):
    r2 = {kind: cv["r2"]["mean"] for kind, cv in selection["candidates"].items()}
    assert set(r2) == set(CANDIDATES)
    assert selection["kind"].endswith("_log") and selection["kind"] == max(r2, key=r2.get)
    assert r2[selection["kind"]] > 0.95 and r2[selection["kind"]] > r2["random_forest"] + 0.05
    assert selection["cv"] == selection["candidates"][selection["kind"]]
    error = selection["error"]
    # the noise alone is 3 % per measurement, 2.1 % on a mean of two: the model's error is at least that
    assert error["scale"] == "log" and 0.02 < error["sd"] < 0.15
    assert error["definition"].startswith(
        f"out-of-fold prediction error of {selection['kind']} (5-fold CV, 60 configurations): "
        "root mean square s of log(y/ŷ)"
    )
    assert error["definition"].endswith("an estimate")


def test_a_value_not_above_zero_leaves_the_log_models_out(table):
    X, y = per_config(table, "quality")
    shifted = select_model(X, y - 0.5)  # 0.7 - 0.5 > 0, 0.2 - 0.5 < 0: log(y) undefined
    assert set(shifted["candidates"]) == {"random_forest"} and shifted["kind"] == "random_forest"
    assert shifted["log_kinds"] == "left out: not every value > 0"
    assert shifted["error"]["scale"] == "absolute"
    assert 0.005 < shifted["error"]["sd"] < 0.1  # ±0.01 noise on the mean of two, a step the forest finds


@pytest.mark.parametrize("configs", [3, 6, 7])
def test_a_small_campaign_leaves_out_the_lasso_it_cannot_fit(table, configs):
    """lasso_pairs picks its penalty by an inner 5-fold CV: a campaign whose training folds hold fewer than 5
    configurations is learned without it (a campaign of 3 or 6 configurations failed in evaluate before)."""
    small = table[table["config_id"].isin([f"c{i}" for i in range(configs)])]
    res = evaluate(small, ["e2el_p50_ms"], k=5, curve_sizes=(), curve_repeats=1)["e2el_p50_ms"]
    sel = res["selection"]
    fits = configs - -(-configs // 5) >= 5  # the smallest training fold of 5-fold CV
    assert ("lasso_pairs_log" in sel["candidates"]) is fits
    assert ("lasso" in sel) is (not fits) and sel["kind"] in sel["candidates"]


def test_evaluate_reuses_the_selection_forest_cv(table):
    res = evaluate(table, ["e2el_p50_ms"], k=5, curve_sizes=(), curve_repeats=1)["e2el_p50_ms"]
    assert res["selection"]["kind"].endswith("_log")
    X, y = per_config(table, "e2el_p50_ms")
    assert res["cv"]["random_forest"] == res["selection"]["candidates"]["random_forest"]
    assert res["cv"]["random_forest"] == cross_validate(X, y, "random_forest", 5, 0)  # the same folds


def test_recommendation_interval_contains_the_truth(table, space, selection):
    rec = recommend(
        table, space, objective="e2el_p50_ms", targets=["e2el_p50_ms"], candidates=500,
        selections={"e2el_p50_ms": selection},
    )  # fmt: skip
    assert latency(rec["features"]) == 10.0  # none of the slow options
    p = rec["predicted"]["e2el_p50_ms"]
    assert p["model"] == selection["kind"] and p["cv_r2"] == selection["cv"]["r2"]["mean"]
    low, high = p["interval_95"]
    assert low < 10.0 < high
    s = selection["error"]["sd"]  # multiplicative: ŷ·exp(±1.96 s)
    assert low == pytest.approx(p["mean"] * np.exp(-1.96 * s)) and high == pytest.approx(
        p["mean"] * np.exp(1.96 * s)
    )
    assert p["error_scale"] == "log" and p["uncertainty"] == selection["error"]["definition"]


def test_a_constraint_excludes_the_unconstrained_optimum(table, space):
    rec = recommend(
        table, space, objective="e2el_p50_ms", constraints={"quality": (">=", 0.5)},
        targets=["e2el_p50_ms", "quality"], candidates=500,
    )  # fmt: skip
    # quality >= 0.5 needs the longest generation (x2): the fastest such configuration, 20 ms
    assert "max_new_tokens_128" in rec["features"] and latency(rec["features"]) == 20.0
    low, high = rec["predicted"]["e2el_p50_ms"]["interval_95"]
    assert low < 20.0 < high
    q = rec["predicted"]["quality"]
    assert q["mean"] >= 0.5 and q["interval_95"][0] < 0.7 < q["interval_95"][1]
    assert q["model"] in CANDIDATES and q["cv_r2"] > 0.95
    assert rec["meeting_constraints"] < rec["candidates"]


def test_a_confident_recommendation_keeps_the_whole_interval_within_the_bound(table, space):
    """Best quality with latency <= 22 ms: by the predicted mean a 20 ms configuration with the long generation
    qualifies (quality 0.7) though its interval reaches past 22 ms; confidently, only configurations whose
    interval's upper end stays within 22 ms do."""
    ask = dict(
        objective="quality", sense="max", constraints={"e2el_p50_ms": ("<=", 22.0)},
        targets=["e2el_p50_ms", "quality"], candidates=500,
    )  # fmt: skip
    by_mean = recommend(table, space, **ask)
    assert latency(by_mean["features"]) == 20.0 and quality(by_mean["features"]) == 0.7
    assert by_mean["predicted"]["e2el_p50_ms"]["interval_95"][1] > 22.0
    assert by_mean["constraints_on"] == "the predicted mean"
    sure = recommend(table, space, confident=True, **ask)
    assert sure["predicted"]["e2el_p50_ms"]["interval_95"][1] <= 22.0 and latency(sure["features"]) < 22.0
    assert sure["constraints_on"] == "the whole 95 % interval"
    assert sure["meeting_constraints"] < by_mean["meeting_constraints"]


class Fixed:
    """A measurer returning known values in turn, one list per figure."""

    def __init__(self, values: dict[str, list[float]]):
        self.values, self.calls = values, 0

    def measure(self, kwargs: dict, *, seed: int) -> dict:
        self.calls += 1
        return {t: v[self.calls - 1] for t, v in self.values.items()}


def _predicted(mean: float, scale: str, sd: float) -> dict:
    half = {
        "log": (mean * np.exp(-1.96 * sd), mean * np.exp(1.96 * sd)),
        "absolute": (mean - 1.96 * sd, mean + 1.96 * sd),
    }
    return {"mean": mean, "error_scale": scale, "error_sd": sd, "interval_95": list(half[scale])}


def test_verify_states_z_and_the_interval_on_known_measurements():
    rec = {
        "kwargs": {},
        "predicted": {
            "lat": _predicted(100.0, "log", 0.1),  # [82.2, 121.7]
            "slow": _predicted(100.0, "log", 0.1),
            "cpu": _predicted(5.0, "absolute", 1.0),  # [3.04, 6.96]
        },
    }
    check = verify(rec, Fixed({"lat": [110, 110], "slow": [130, 130], "cpu": [6, 8]}), repetitions=2)
    lat, slow, cpu = check["lat"], check["slow"], check["cpu"]
    assert lat["z"] == pytest.approx(np.log(1.1) / 0.1) and lat["within_interval"] is True  # sem 0
    assert slow["z"] == pytest.approx(np.log(1.3) / 0.1) and slow["within_interval"] is False
    assert lat["z_scale"] == "log" and lat["relative_error"] == pytest.approx(10 / 110)
    # mean 7, sem = sd(6, 8)/√2 = 1: z = 2 / √(1² + 1²), outside 5 ± 1.96
    assert cpu["measured_sem"] == pytest.approx(1.0) and cpu["z"] == pytest.approx(2 / np.sqrt(2))
    assert cpu["within_interval"] is False and cpu["z_scale"] == "absolute"
