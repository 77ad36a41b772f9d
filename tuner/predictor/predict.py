"""The predictor's result for a campaign directory: what the factsheet's predictor section shows."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from pydantic import ValidationError

from probes.core.files import write_atomic
from tuner.campaign.accuracy import FIGURES as ACCURACY_FIGURES
from tuner.campaign.accuracy import AccuracyOptions
from tuner.campaign.runner import build_measurer, load_model
from tuner.campaign.store import CampaignError, CampaignStore
from tuner.features.space import FeatureSpace
from tuner.predictor.decide import config_means, pareto_front, recommend, verify
from tuner.predictor.learn import evaluate

# senses of the figures the campaign measurers report (anything else: minimised)
SENSES = dict.fromkeys(ACCURACY_FIGURES, "max")
PROXY_NOTE = "cpu_s: CPU-seconds of the serving process tree (/proc), a labelled resource proxy, not energy"


def predict_campaign(
    root: Path,
    targets: list[str],
    objective: str,
    constraints: dict,
    verify_reps: int = 0,
    confident: bool = False,
) -> dict:
    store = CampaignStore(root)
    plan = store.plan()
    df = store.table()
    if df.empty:
        raise CampaignError(f"{root}: no measurements yet (run the campaign first)")
    missing = [t for t in {objective.removeprefix("max:"), *constraints} if t not in df.columns]
    if missing:
        raise CampaignError(f"{root}: no measured figure named {', '.join(sorted(missing))}")
    space = FeatureSpace(load_model(plan["feature_model"]))
    seed = plan.get("seed", 0)
    decided = decide(df, space, targets, objective, constraints, seed=seed, confident=confident)
    rec = decided["recommendation"]
    verification = None
    if rec is not None and verify_reps > 0:
        measurer = build_measurer(plan["measurer"], plan.get("options", {}))
        try:
            verification = verify(rec, measurer, verify_reps)
        finally:
            close = getattr(measurer, "close", None)
            if close:
                close()
    runs = (
        [json.loads(line) for line in (root / "runs.jsonl").read_text().splitlines()]
        if (root / "runs.jsonl").exists()
        else []
    )
    out = {
        "model": {
            k: plan.get(k)
            for k in ("feature_model", "library", "features", "constraints", "valid_configurations")
        },
        "sampling": plan.get("sampling"),
        "campaign": {
            "configurations": len(plan["configs"]),
            "repetitions": plan["repetitions"],
            "measurements": len(df),
            "executor": plan.get("executor"),
            "wall_s": round(sum(r["wall_s"] for r in runs), 1),
            "nodes": sorted(df["node"].unique().tolist()) if "node" in df else [],
            "seed": seed,
        },
        "notes": [PROXY_NOTE] if "cpu_s" in df.columns else [],
        "accuracy": accuracy_statement(plan.get("options", {})),
        "targets": decided["targets"],
        "pareto": decided["pareto"],
        "recommendation": rec,
        "verification": verification,
        "summary": summary(decided, len(plan["configs"]), len(df), verification),
    }
    write_atomic(root / "predictor.json", json.dumps(out, indent=1, default=str))
    return out


def decide(
    df: pd.DataFrame,
    space: FeatureSpace,
    targets: list[str],
    objective: str,
    constraints: dict,
    *,
    seed: int,
    confident: bool = False,
) -> dict:
    """What the campaign's table determines (seeded, so the same table gives the same answer; `factsheet
    validate` re-runs it): per target the learned models and the one selected, the Pareto front, and the
    recommendation with its predictions."""
    sense = "max" if objective.startswith("max:") else "min"
    objective = objective.removeprefix("max:")
    learned = evaluate(df, targets)  # k-fold splits and forests seeded 0, as since the first release
    front_cols = [t for t in targets if t in df.columns and learned[t].get("status") != "not_measured"]
    front = pareto_front(df, {t: SENSES.get(t, "min") for t in front_cols}) if front_cols else None
    rec = recommend(
        df,
        space,
        objective=objective,
        sense=sense,
        constraints=constraints,
        targets=targets,
        seed=seed,
        selections={t: v["selection"] for t, v in learned.items() if "selection" in v},  # CV'd once
        confident=confident,
    )
    if rec is not None:
        rec["notes"] = [
            f"{t}: {learned[t]['learnability']['statement']}; its prediction is close to the campaign's mean"
            for t in sorted({objective, *constraints})
            if learned.get(t, {}).get("status") == "not_learnable"
        ]
    pareto = None
    if front is not None:
        pareto = {
            "senses": {t: SENSES.get(t, "min") for t in front_cols},
            "front": front.reset_index().to_dict(orient="records"),
            # every measured configuration's means on the same figures: what the front is drawn against
            "configurations": config_means(df, front_cols).reset_index().to_dict("records"),
        }
    return {"targets": learned, "pareto": pareto, "recommendation": rec}


def summary(decided: dict, configurations: int, measurements: int, verification: dict | None) -> dict:
    learned, rec = decided["targets"], decided["recommendation"]
    unlearnable = {
        t: v["learnability"]["statement"] for t, v in learned.items() if v.get("status") == "not_learnable"
    }
    # No R² for a figure that is not learnable: its statement stands in its place.
    rf = {t: v["cv"]["random_forest"]["r2"] for t, v in learned.items() if "cv" in v and t not in unlearnable}
    best = {t: v["selection"] for t, v in learned.items() if "selection" in v and t not in unlearnable}
    return {
        "configurations": configurations,
        "measurements": measurements,
        "r2_random_forest": {t: (None if r is None else round(r["mean"], 3)) for t, r in rf.items()},
        "best_model": {
            t: {"kind": b["kind"], "r2": None if b["cv"]["r2"] is None else round(b["cv"]["r2"]["mean"], 3)}
            for t, b in best.items()
        },
        "not_learnable": unlearnable,
        "recommended": None if rec is None else rec["features"],
        "verified": None
        if verification is None
        else {t: v.get("relative_error") for t, v in verification.items()},
    }


def accuracy_statement(options: dict) -> dict | None:
    """What the campaign's accuracy figures rest on, from the measurer's `accuracy` option (None: off)."""
    acc = options.get("accuracy") if isinstance(options, dict) else None
    if acc is None:
        return None
    try:
        return AccuracyOptions.model_validate(acc).statement()
    except ValidationError:
        return None  # a measurer of another kind, with an option of the same name
