"""Accuracy figures as targets: learnability statements, the Pareto front and "minimise E2EL p99 subject to
pass@1 >= x", on a synthetic table whose truth is known."""

import itertools
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tuner.features.space import FeatureSpace
from tuner.features.uvl import parse_uvl
from tuner.predictor.decide import pareto_front, recommend
from tuner.predictor.learn import evaluate, learnability
from tuner.predictor.predict import SENSES

pytestmark = pytest.mark.system

UVL = Path(__file__).resolve().parents[1] / "campaign" / "live_sampling.uvl"
FEATURES = ["Temperature", "temperature_0_0", "temperature_1_0", "TopK", "top_k_5"]
FEATURES += ["RepetitionPenalty", "repetition_penalty_1_3"]


def _truth(chosen: set[str]) -> tuple[float, float]:
    """(e2el_p99_ms, pass_at_1): greedy is accurate, sampling is fast, top-k and the penalty cost latency."""
    e2el = 100 + 50 * ("top_k_5" in chosen) + 20 * ("repetition_penalty_1_3" in chosen)
    e2el -= 30 * ("temperature_1_0" in chosen)
    return e2el, 0.3 if "temperature_0_0" in chosen else 0.1


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = random.Random(0)
    rows = []
    for temp, topk, rp in itertools.product((None, "temperature_0_0", "temperature_1_0"), (0, 1), (0, 1)):
        chosen = {"LiveSampling"}
        if temp:
            chosen |= {"Temperature", temp}
        if topk:
            chosen |= {"TopK", "top_k_5"}
        if rp:
            chosen |= {"RepetitionPenalty", "repetition_penalty_1_3"}
        e2el, acc = _truth(chosen)
        cid = "-".join(sorted(chosen))
        for rep in range(3):
            row = {"config_id": cid, "repetition": rep, "e2el_p99_ms": e2el * (1 + rng.gauss(0, 0.01))}
            row["pass_at_1"] = acc + (-0.02, 0.0, 0.02)[rep]  # noise; each mean is the truth
            row["graded_plus_share"] = 0.5  # the same in every measurement
            row.update({f"f:{f}": int(f in chosen) for f in FEATURES})
            rows.append(row)
    return pd.DataFrame(rows)


def test_accuracy_figures_are_maximised():
    assert {SENSES[f] for f in ("pass_at_1", "pass_at_1_base", "graded_base_share", "graded_plus_share")} == {
        "max"
    }


def test_minimise_e2el_p99_subject_to_pass_at_1(table):
    space = FeatureSpace(parse_uvl(UVL.read_text()))
    free = recommend(table, space, objective="e2el_p99_ms", targets=["e2el_p99_ms"], candidates=200)
    assert "temperature_1_0" in free["features"] and "top_k_5" not in free["features"]
    rec = recommend(
        table,
        space,
        objective="e2el_p99_ms",
        constraints={"pass_at_1": (">=", 0.2)},
        targets=["e2el_p99_ms", "pass_at_1"],
        candidates=200,
    )
    assert "temperature_0_0" in rec["features"]  # the only accurate choice
    assert not {"top_k_5", "repetition_penalty_1_3"} & set(rec["features"])  # and the fastest of those
    assert rec["kwargs"]["request"] == {"temperature": 0.0}
    assert rec["predicted"]["pass_at_1"]["mean"] >= 0.2
    assert rec["predicted"]["e2el_p99_ms"]["mean"] == pytest.approx(100, rel=0.15)
    impossible = recommend(
        table, space, objective="e2el_p99_ms", constraints={"pass_at_1": (">=", 0.5)},
        targets=["e2el_p99_ms", "pass_at_1"], candidates=200,
    )  # fmt: skip
    assert impossible is None


def test_pareto_front_trades_latency_for_accuracy(table):
    front = pareto_front(
        table, {"e2el_p99_ms": SENSES.get("e2el_p99_ms", "min"), "pass_at_1": SENSES["pass_at_1"]}
    )
    # fastest (sampling, no extras, ~70 ms, 0.1) and most accurate at least latency (greedy, ~100 ms, 0.3)
    assert len(front) == 2
    assert np.allclose(sorted(front["e2el_p99_ms"]), [70, 100], rtol=0.05)


def test_learnability_statements(table):
    res = evaluate(table, ["pass_at_1", "graded_plus_share"], k=3, curve_sizes=(), curve_repeats=1)
    assert res["pass_at_1"]["learnability"]["learnable"] is True  # 0.1 vs 0.3 beyond ±0.02 noise
    same = res["graded_plus_share"]
    assert same["status"] == "not_learnable" and "anova_p" not in same["learnability"]  # 0/0: no p
    assert same["learnability"]["statement"] == (
        "not learnable at this model size: the same value in every measurement of every configuration"
    )
    noise = table.assign(pass_at_1=0.05 + np.random.default_rng(1).normal(0, 0.02, len(table)))
    verdict = learnability(noise, "pass_at_1")
    assert verdict["learnable"] is False and verdict["anova_p"] > 0.05
    assert verdict["statement"] == (
        "not learnable at this model size: varies across configurations no more than its own sampling "
        f"error (ANOVA p={verdict['anova_p']:.2g})"
    )


def _greedy_table(pass_counts: list[int], n_tasks: int) -> pd.DataFrame:
    """Greedy decoding: each configuration's repetitions give the same pass count of `n_tasks` tasks."""
    rows = []
    for i, k in enumerate(pass_counts):
        for rep in range(2):
            rows.append(
                {"config_id": f"c{i}", "repetition": rep, "pass_at_1": k / n_tasks, "accuracy_tasks": n_tasks}
            )
    return pd.DataFrame(rows)


def test_one_task_of_four_is_within_the_binomial_error_of_the_subset():
    # Repetitions agree exactly, so ANOVA alone calls any difference signal; one task more of four is not.
    verdict = learnability(_greedy_table([0, 1, 0, 1, 0], 4), "pass_at_1")
    assert verdict["anova_p"] == 0.0 and verdict["tasks"]["chi2_p"] > 0.05
    assert verdict["learnable"] is False
    assert verdict["statement"] == (
        "not learnable at this model size: varies across configurations no more than its own sampling "
        f"error (ANOVA p=0; over its 4 tasks, χ² p={verdict['tasks']['chi2_p']:.2g})"
    )


def test_a_clear_difference_over_many_tasks_is_learnable(table):
    verdict = learnability(_greedy_table([10, 30, 10, 30], 100), "pass_at_1")
    assert verdict["learnable"] is True and verdict["tasks"]["chi2_p"] < 0.001
    assert "tasks" not in learnability(table, "pass_at_1")  # no task count: repetition noise only
