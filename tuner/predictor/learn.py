"""Learn each measured figure from the configuration's features: Random Forest against a mean predictor and
ridge regression, k-fold cross-validation (R², MAE, MAPE with their spread over folds), a learning curve,
permutation importance, a learnability check (does the figure vary across configurations more than its own
repetition noise?), and per figure the model a recommendation predicts with: the candidate that
cross-validates best, its uncertainty from its own out-of-fold errors.

Input: the campaign table, one row per measurement, feature columns `f:NAME` (0/1). Models are trained on
per-configuration means (the repetitions' average), which is what a recommendation predicts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.compose import TransformedTargetRegressor
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import RandomForestRegressor
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LassoCV, Ridge
from sklearn.metrics import mean_absolute_error, mean_absolute_percentage_error, r2_score
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

from tuner.campaign.accuracy import N_TASKS, TASK_SHARES

MODELS = ("mean", "ridge", "random_forest")


def make_model(kind: str, seed: int = 0):
    """`mean`, `ridge`, `random_forest`, `lasso_pairs`; a `_log` suffix learns log(y) and predicts exp of it (latency and CPU
    time are products of the options' effects: tokens x beams x cache; scores stay on the original scale)."""
    if kind.endswith("_log"):
        return TransformedTargetRegressor(
            regressor=make_model(kind.removesuffix("_log"), seed), func=np.log, inverse_func=np.exp
        )
    if kind == "mean":
        return DummyRegressor(strategy="mean")
    if kind == "ridge":
        return Ridge(alpha=1.0)
    if kind == "random_forest":
        return RandomForestRegressor(n_estimators=100, min_samples_leaf=1, random_state=seed, n_jobs=1)
    if kind == "lasso_pairs":
        # every pair of features as a product term, the lasso keeping the few that matter (its penalty by
        # inner 5-fold CV): on log(y) this learns effects that multiply only together (no KV cache x length)

        return make_pipeline(
            PolynomialFeatures(2, interaction_only=True, include_bias=False),
            LassoCV(cv=5, alphas=30, max_iter=5000, random_state=seed),
        )
    raise ValueError(f"unknown model {kind}")


def feature_columns(df: pd.DataFrame) -> list[str]:
    cols = [c for c in df.columns if c.startswith("f:")]
    return [c for c in cols if df[c].nunique() > 1]  # constant columns carry nothing


def per_config(df: pd.DataFrame, target: str) -> tuple[pd.DataFrame, pd.Series]:
    cols = feature_columns(df)
    g = df.dropna(subset=[target]).groupby("config_id")
    return g[cols].first(), g[target].mean()


NOT_LEARNABLE = "not learnable at this model size"


def learnability(df: pd.DataFrame, target: str, alpha: float = 0.05) -> dict:
    """One-way ANOVA of the figure across configurations: learnable when the configurations' means differ
    by more than the repetitions' noise explains (p < alpha). Needs at least 2 repetitions per config.
    `statement` is what the factsheet prints instead of an R² when the figure is not learnable."""
    groups = [g[target].dropna().to_numpy() for _, g in df.groupby("config_id")]
    groups = [g for g in groups if len(g) >= 2]
    if len(groups) < 2:
        return {"learnable": None, "reason": "fewer than two configurations with two repetitions"}
    means = np.array([g.mean() for g in groups])
    sem = float(np.sqrt(np.mean([g.var(ddof=1) / len(g) for g in groups])))
    spread = {"between_config_sd": float(means.std(ddof=1)), "repetition_sem": sem}
    if np.ptp(np.concatenate(groups)) == 0:  # ANOVA is undefined (0/0), so no p: nothing varies at all
        return {
            "learnable": False,
            **spread,
            "reason": "the same value in every measurement",
            "statement": f"{NOT_LEARNABLE}: the same value in every measurement of every configuration",
        }
    f, p = stats.f_oneway(*groups)
    p = 0.0 if np.isinf(f) else float(p)  # repetitions identical, configurations not: all of it is signal
    tasks = task_sampling(df, target)
    if p < alpha and (tasks is None or tasks["chi2_p"] < alpha):
        return {
            "learnable": True,
            "anova_p": p,
            **spread,
            **({"tasks": tasks} if tasks else {}),
            "reason": "varies across configurations beyond repetition noise"
            + (" and beyond the binomial error of its tasks" if tasks else ""),
        }
    error = f"ANOVA p={p:.2g}"
    if tasks is not None:
        error += f"; over its {tasks['n_tasks']} tasks, χ² p={tasks['chi2_p']:.2g}"
    return {
        "learnable": False,
        "anova_p": p,
        **spread,
        **({"tasks": tasks} if tasks else {}),
        "reason": "varies across configurations no more than its own sampling error: not learnable here",
        "statement": f"{NOT_LEARNABLE}: varies across configurations no more than its own sampling error "
        f"({error})",
    }


def task_sampling(df: pd.DataFrame, target: str) -> dict | None:
    """For a share of tasks (pass@1 over the subset's n tasks): do the configurations' pass counts differ by
    more than the binomial error of n tasks explains? χ² test of homogeneity on (passed, failed) per
    configuration, from each configuration's mean over repetitions (greedy repetitions repeat the same
    outcome, so they add no tasks). The tasks are the same for every configuration; treating them as
    independent makes the test conservative: it says "learnable" only on a clear difference."""
    if target not in TASK_SHARES or N_TASKS not in df.columns:
        return None
    rows = df.dropna(subset=[target, N_TASKS])
    g = rows.groupby("config_id")
    n = g[N_TASKS].first().astype(int)
    if n.nunique() != 1 or len(n) < 2:
        return None
    passed = (g[target].mean() * n).round().astype(int)
    table = np.column_stack([passed, n - passed])
    if table[:, 0].sum() in (0, table.sum()):  # everyone passes or fails every task: no variation at all
        p = 1.0
    else:
        p = float(stats.chi2_contingency(table, correction=False)[1])
    return {"n_tasks": int(n.iloc[0]), "configurations": len(n), "chi2_p": p}


def n_folds(k: int, n: int) -> int:
    """The folds a k-fold CV of n configurations uses: at least 2, at most one per configuration."""
    return max(2, min(k, n))


def out_of_fold(X: pd.DataFrame, y: pd.Series, kind: str, k: int = 5, seed: int = 0):
    """Shuffled k-fold: every configuration predicted by the model fitted on the other folds. Returns the
    out-of-fold predictions (in y's order) and the folds' test indices."""
    k = n_folds(k, len(y))
    pred = np.empty(len(y))
    folds = []
    for train, test in KFold(n_splits=k, shuffle=True, random_state=seed).split(X):
        pred[test] = make_model(kind, seed).fit(X.iloc[train], y.iloc[train]).predict(X.iloc[test])
        folds.append(test)
    return pred, folds


def fold_scores(y: pd.Series, pred: np.ndarray, folds: list[np.ndarray]) -> dict:
    """R², MAE and MAPE per fold of out-of-fold predictions: their mean, spread over folds and count."""
    scores: dict[str, list[float]] = {"r2": [], "mae": [], "mape": []}
    for test in folds:
        truth, p = y.iloc[test], pred[test]
        if len(test) >= 2:
            scores["r2"].append(float(r2_score(truth, p)))
        scores["mae"].append(float(mean_absolute_error(truth, p)))
        if (truth != 0).all():
            scores["mape"].append(float(mean_absolute_percentage_error(truth, p)))
    return {
        name: {
            "mean": float(np.mean(v)),
            "sd": float(np.std(v, ddof=1)) if len(v) > 1 else None,
            "folds": len(v),
        }
        if v
        else None
        for name, v in scores.items()
    }


def cross_validate(X: pd.DataFrame, y: pd.Series, kind: str, k: int = 5, seed: int = 0) -> dict:
    return fold_scores(y, *out_of_fold(X, y, kind, k, seed))


# what a recommendation may predict with; log kinds learn log(y) (effects that multiply), only for y > 0
CANDIDATES = ("random_forest", "random_forest_log", "ridge_log", "lasso_pairs_log")
LASSO_MIN_TRAIN = 5  # lasso_pairs chooses its penalty by an inner 5-fold CV: it needs 5 configurations to fit
Z95 = 1.96


def select_model(X: pd.DataFrame, y: pd.Series, k: int = 5, seed: int = 0) -> dict:
    """The candidate with the highest mean k-fold CV R² (ties and no R² at all: the first listed), with its
    uncertainty: the root mean square of its out-of-fold prediction errors, in log space for a log kind
    (log(y/ŷ), a multiplicative factor) and absolute otherwise. An estimate from the campaign's own
    configurations, labelled as one."""
    positive = bool((y > 0).all())
    kinds = [c for c in CANDIDATES if positive or not c.endswith("_log")]
    lasso_fits = len(y) - -(-len(y) // n_folds(k, len(y))) >= LASSO_MIN_TRAIN  # the smallest training fold
    if not lasso_fits:
        kinds = [c for c in kinds if not c.startswith("lasso_pairs")]
    runs = {kind: out_of_fold(X, y, kind, k, seed) for kind in kinds}
    cv = {kind: fold_scores(y, *run) for kind, run in runs.items()}
    r2 = {kind: c["r2"]["mean"] if c["r2"] else None for kind, c in cv.items()}
    scored = [kind for kind in kinds if r2[kind] is not None]
    best = max(scored, key=lambda kind: r2[kind]) if scored else kinds[0]
    pred, folds = runs[best]
    log = best.endswith("_log")
    residual = np.log(y.to_numpy() / pred) if log else y.to_numpy() - pred
    what = (
        "root mean square s of log(y/ŷ); 95 % interval ŷ·exp(±1.96 s)"
        if log
        else "root mean square s of y − ŷ; 95 % interval ŷ ± 1.96 s"
    )
    return {
        "kind": best,
        "basis": "highest mean k-fold CV R²"
        if scored
        else "no CV R² (too few configurations per fold): the first candidate",
        "cv": cv[best],
        "candidates": cv,
        "log_kinds": "candidates" if positive else "left out: not every value > 0",
        **(
            {}
            if lasso_fits
            else {"lasso": f"left out: fewer than {LASSO_MIN_TRAIN} configurations per training fold"}
        ),
        "configurations": len(y),
        "folds": len(folds),
        "error": {
            "scale": "log" if log else "absolute",
            "sd": float(np.sqrt(np.mean(residual**2))),
            "definition": f"out-of-fold prediction error of {best} ({len(folds)}-fold CV, {len(y)} "
            f"configurations): {what}; an estimate",
        },
    }


def interval_95(error: dict, predicted):
    """The 95 % interval around a prediction from `select_model`'s error: multiplicative in log space."""
    s = error["sd"]
    if error["scale"] == "log":
        return predicted * np.exp(-Z95 * s), predicted * np.exp(Z95 * s)
    return predicted - Z95 * s, predicted + Z95 * s


def learning_curve(
    X: pd.DataFrame, y: pd.Series, sizes: list[int], *, repeats: int = 5, seed: int = 0
) -> list[dict]:
    """Random Forest R² on held-out configurations when trained on n of them (random subsets, repeated)."""
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        if n >= len(y) - 1:
            continue
        r2s = []
        for _ in range(repeats):
            idx = rng.permutation(len(y))
            tr, te = idx[:n], idx[n:]
            m = make_model("random_forest", seed).fit(X.iloc[tr], y.iloc[tr])
            r2s.append(float(r2_score(y.iloc[te], m.predict(X.iloc[te]))))
        out.append(
            {"n": n, "r2_mean": float(np.mean(r2s)), "r2_sd": float(np.std(r2s, ddof=1)), "repeats": repeats}
        )
    return out


def importance(X: pd.DataFrame, y: pd.Series, seed: int = 0, top: int = 10) -> list[dict]:
    m = make_model("random_forest", seed).fit(X, y)
    res = permutation_importance(m, X, y, n_repeats=10, random_state=seed)
    order = np.argsort(-res.importances_mean)[:top]
    return [
        {
            "feature": X.columns[i][2:],
            "mean": float(res.importances_mean[i]),
            "sd": float(res.importances_std[i]),
        }
        for i in order
    ]


CURVE_SIZES = (5, 10, 15, 20, 30, 40, 60, 80, 120, 160, 240)


def evaluate(
    df: pd.DataFrame,
    targets: list[str],
    k: int = 5,
    seed: int = 0,
    curve_sizes=CURVE_SIZES,
    curve_repeats: int = 5,
) -> dict:
    """Per target: learnability, CV figures of every model, the model a recommendation predicts with
    (`select_model`), learning curve, importance."""
    out = {}
    for t in targets:
        if t not in df.columns or df[t].dropna().empty:
            out[t] = {"status": "not_measured", "reason": f"no measured values of {t}"}
            continue
        X, y = per_config(df, t)
        entry = {"configurations": len(y), "learnability": learnability(df, t)}
        if entry["learnability"]["learnable"] is False:
            entry["status"] = "not_learnable"
        entry["selection"] = select_model(X, y, k, seed)
        done = entry["selection"]["candidates"]  # the forest's CV is one of them: not run twice
        entry["cv"] = {kind: done.get(kind) or cross_validate(X, y, kind, k, seed) for kind in MODELS}
        sizes = sorted({s for s in curve_sizes if s < len(y) - 1})
        entry["learning_curve"] = learning_curve(X, y, sizes, repeats=curve_repeats, seed=seed)
        entry["importance"] = importance(X, y, seed)
        out[t] = entry
    return out
