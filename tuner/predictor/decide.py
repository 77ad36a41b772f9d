"""Decisions from the learned models: the Pareto front of the measured configurations, a recommendation under
user constraints over a large uniform sample of valid configurations (predicted, with the spread of the
forest's trees as uncertainty), and its verification by a live measurement."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from tuner.features.configs import kwargs_of
from tuner.features.space import FeatureSpace
from tuner.predictor.learn import feature_columns, make_model, per_config

OPS = {">=": np.greater_equal, "<=": np.less_equal}


def pareto_mask(values: pd.DataFrame, senses: dict[str, str]) -> np.ndarray:
    """True for rows no other row dominates (at least as good on all objectives, better on one)."""
    signed = np.column_stack([values[c].to_numpy() * (1 if s == "min" else -1) for c, s in senses.items()])
    keep = np.ones(len(signed), dtype=bool)
    for i in range(len(signed)):
        dominated = np.all(signed <= signed[i], axis=1) & np.any(signed < signed[i], axis=1)
        keep[i] = not dominated.any()
    return keep


def pareto_front(df: pd.DataFrame, senses: dict[str, str]) -> pd.DataFrame:
    means = df.groupby("config_id")[list(senses)].mean().dropna()
    return means[pareto_mask(means, senses)].sort_values(list(senses)[0])


def _forest_predict(forest, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    per_tree = np.stack([t.predict(X.to_numpy()) for t in forest.estimators_])
    return per_tree.mean(axis=0), per_tree.std(axis=0, ddof=1)


def recommend(
    df: pd.DataFrame,
    space: FeatureSpace,
    *,
    objective: str,
    sense: str = "min",
    constraints: dict[str, tuple[str, float]] | None = None,
    targets: list[str],
    candidates: int = 2000,
    seed: int = 0,
) -> dict | None:
    """The candidate with the best predicted objective whose predicted figures meet every constraint."""
    constraints = constraints or {}
    cols = feature_columns(df)
    pool = {
        frozenset(f[2:] for f in cols if row[f])
        for _, row in df.groupby("config_id")[cols].first().iterrows()
    }
    configs = [frozenset(c) for c in space.uniform(random.Random(seed), candidates)]
    names = [c[2:] for c in cols]
    Xc = pd.DataFrame([[int(n in c) for n in names] for c in configs], columns=cols)
    preds = {}
    for t in {objective, *constraints}:
        X, y = per_config(df, t)
        forest = make_model("random_forest", seed).fit(X[cols], y)
        preds[t] = _forest_predict(forest, Xc)
    ok = np.ones(len(configs), dtype=bool)
    for t, (op, bound) in constraints.items():
        ok &= OPS[op](preds[t][0], bound)
    if not ok.any():
        return None
    score = preds[objective][0] if sense == "min" else -preds[objective][0]
    best = int(np.argmin(np.where(ok, score, np.inf)))
    config = configs[best]
    return {
        "features": sorted(config),
        "kwargs": kwargs_of(space.model, config),
        "measured_before": frozenset(f for f in config if f in set(names)) in pool,
        "objective": {"target": objective, "sense": sense},
        "constraints": {t: list(v) for t, v in constraints.items()},
        "candidates": len(configs),
        "meeting_constraints": int(ok.sum()),
        "predicted": {t: {"mean": float(m[best]), "sd_trees": float(s[best])} for t, (m, s) in preds.items()},
    }


def verify(rec: dict, measurer, repetitions: int = 3, seed: int = 0) -> dict:
    """Measure the recommended configuration; compare with the prediction (mean, and z = gap / combined sd)."""
    runs = [measurer.measure(rec["kwargs"], seed=seed + r) for r in range(repetitions)]
    out = {}
    for t, p in rec["predicted"].items():
        vals = np.array([r[t] for r in runs if r.get(t) is not None], dtype=float)
        if len(vals) == 0:
            out[t] = {"status": "not_measured"}
            continue
        sem = float(vals.std(ddof=1) / np.sqrt(len(vals))) if len(vals) > 1 else 0.0
        gap = float(vals.mean() - p["mean"])
        sd = float(np.hypot(p["sd_trees"], sem))
        out[t] = {
            "measured_mean": float(vals.mean()),
            "measured_sem": sem,
            "n": len(vals),
            "predicted_mean": p["mean"],
            "error": gap,
            "relative_error": gap / vals.mean() if vals.mean() else None,
            "z": gap / sd if sd > 0 else None,
        }
    return out
