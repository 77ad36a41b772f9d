"""Decisions from the learned models: the Pareto front of the measured configurations, a recommendation under
user constraints over a large uniform sample of valid configurations (each figure predicted by the model
that cross-validates best for it, with a 95 % interval from that model's out-of-fold error), and its
verification by a live measurement."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from tuner.features.configs import kwargs_of
from tuner.features.space import FeatureSpace
from tuner.predictor.learn import feature_columns, interval_95, make_model, per_config, select_model

OPS = {">=": np.greater_equal, "<=": np.less_equal}


def pareto_mask(values: pd.DataFrame, senses: dict[str, str]) -> np.ndarray:
    """True for rows no other row dominates (at least as good on all objectives, better on one)."""
    signed = np.column_stack([values[c].to_numpy() * (1 if s == "min" else -1) for c, s in senses.items()])
    keep = np.ones(len(signed), dtype=bool)
    for i in range(len(signed)):
        dominated = np.all(signed <= signed[i], axis=1) & np.any(signed < signed[i], axis=1)
        keep[i] = not dominated.any()
    return keep


def config_means(df: pd.DataFrame, figures: list[str]) -> pd.DataFrame:
    """Each configuration's mean over its repetitions, for configurations that have every figure."""
    return df.groupby("config_id")[figures].mean().dropna()


def pareto_front(df: pd.DataFrame, senses: dict[str, str]) -> pd.DataFrame:
    means = config_means(df, list(senses))
    return means[pareto_mask(means, senses)].sort_values(list(senses)[0])


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
    selections: dict[str, dict] | None = None,
    k: int = 5,
    confident: bool = False,
) -> dict | None:
    """The candidate with the best predicted objective whose predicted figures meet every constraint.
    `selections`: `select_model`'s result per figure where already computed on this table (else it is run
    here, k-fold). `confident`: a constraint must hold for the whole 95 % interval (its upper end for <=, its
    lower end for >=), not only for the predicted mean, which a measurement misses about half the time when
    the best candidate sits at the bound."""
    constraints = constraints or {}
    cols = feature_columns(df)
    pool = {
        frozenset(f[2:] for f in cols if row[f])
        for _, row in df.groupby("config_id")[cols].first().iterrows()
    }
    configs = [frozenset(c) for c in space.uniform(random.Random(seed), candidates)]
    names = [c[2:] for c in cols]
    Xc = pd.DataFrame([[int(n in c) for n in names] for c in configs], columns=cols)
    preds, chosen = {}, {}
    for t in sorted({objective, *constraints}):
        X, y = per_config(df, t)
        chosen[t] = (selections or {}).get(t) or select_model(X[cols], y, k, seed)
        preds[t] = make_model(chosen[t]["kind"], seed).fit(X[cols], y).predict(Xc)
    ok = np.ones(len(configs), dtype=bool)
    for t, (op, bound) in constraints.items():
        value = preds[t]
        if confident:
            low, high = interval_95(chosen[t]["error"], value)
            value = high if op == "<=" else low
        ok &= OPS[op](value, bound)
    if not ok.any():
        return None
    score = preds[objective] if sense == "min" else -preds[objective]
    best = int(np.argmin(np.where(ok, score, np.inf)))
    config = configs[best]
    return {
        "features": sorted(config),
        "kwargs": kwargs_of(space.model, config),
        "measured_before": frozenset(f for f in config if f in set(names)) in pool,
        "objective": {"target": objective, "sense": sense},
        "constraints": {t: list(v) for t, v in constraints.items()},
        "constraints_on": "the whole 95 % interval" if confident else "the predicted mean",
        "candidates": len(configs),
        "meeting_constraints": int(ok.sum()),
        "predicted": {t: _prediction(chosen[t], float(p[best])) for t, p in preds.items()},
    }


def _prediction(selection: dict, mean: float) -> dict:
    low, high = interval_95(selection["error"], mean)
    r2 = selection["cv"]["r2"]
    return {
        "mean": mean,
        "model": selection["kind"],
        "cv_r2": None if r2 is None else r2["mean"],
        "interval_95": [float(low), float(high)],
        "error_scale": selection["error"]["scale"],
        "error_sd": selection["error"]["sd"],
        "uncertainty": selection["error"]["definition"],
    }


def verify(rec: dict, measurer, repetitions: int = 3, seed: int = 0) -> dict:
    """Measure the recommended configuration; compare with the prediction: the gap, z = gap / combined sd
    (the prediction's out-of-fold error and the measured mean's standard error; in log space for a model of
    log y), and whether the measured mean falls inside the prediction's 95 % interval."""
    runs = [measurer.measure(rec["kwargs"], seed=seed + r) for r in range(repetitions)]
    out = {}
    for t, p in rec["predicted"].items():
        vals = np.array([r[t] for r in runs if r.get(t) is not None], dtype=float)
        if len(vals) == 0:
            out[t] = {
                "status": "not_measured",
                "reason": f"no value of {t} in the {repetitions} live measurements",
            }
            continue
        mean = float(vals.mean())
        sem = float(vals.std(ddof=1) / np.sqrt(len(vals))) if len(vals) > 1 else 0.0
        gap = mean - p["mean"]
        if p["error_scale"] == "log":
            # log(measured / predicted) against s and the measured mean's relative standard error
            gap_z = float(np.log(mean / p["mean"])) if mean > 0 else None
            sd = float(np.hypot(p["error_sd"], sem / mean)) if mean > 0 else 0.0
            z_definition = "log(measured mean / predicted) / √(s² + (sem / measured mean)²), s in log space"
        else:
            gap_z, sd = gap, float(np.hypot(p["error_sd"], sem))
            z_definition = "(measured mean − predicted) / √(s² + sem²)"
        low, high = p["interval_95"]
        out[t] = {
            "measured_mean": mean,
            "measured_sem": sem,
            "n": len(vals),
            "predicted_mean": p["mean"],
            "error": gap,
            "relative_error": gap / mean if mean else None,
            "z": gap_z / sd if gap_z is not None and sd > 0 else None,
            "z_scale": p["error_scale"],
            "z_definition": z_definition,
            "interval_95": [low, high],
            "within_interval": bool(low <= mean <= high),
        }
    return out
