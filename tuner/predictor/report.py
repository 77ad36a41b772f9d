"""The predictor's result for a campaign directory: what the factsheet's predictor section shows."""

from __future__ import annotations

import json
from pathlib import Path

from tuner.campaign.runner import build_measurer, load_model
from tuner.campaign.store import CampaignError, CampaignStore, atomic_write
from tuner.features.space import FeatureSpace
from tuner.predictor.decide import pareto_front, recommend, verify
from tuner.predictor.learn import evaluate

# senses of the figures the campaign measurers report (anything else: minimised)
SENSES = {"pass_at_1": "max", "graded_pass_share": "max"}
PROXY_NOTE = "cpu_s: CPU-seconds of the serving process tree (/proc), a labelled resource proxy, not energy"


def predict_campaign(
    root: Path, targets: list[str], objective: str, constraints: dict, verify_reps: int = 0
) -> dict:
    store = CampaignStore(root)
    plan = store.plan()
    df = store.table()
    if df.empty:
        raise CampaignError(f"{root}: no measurements yet (run the campaign first)")
    sense = "max" if objective.startswith("max:") else "min"
    objective = objective.removeprefix("max:")
    missing = [t for t in {objective, *constraints} if t not in df.columns]
    if missing:
        raise CampaignError(f"{root}: no measured figure named {', '.join(sorted(missing))}")
    learned = evaluate(df, targets)
    front_cols = [t for t in targets if t in df.columns and learned[t].get("status") != "not_measured"]
    front = pareto_front(df, {t: SENSES.get(t, "min") for t in front_cols}) if front_cols else None
    space = FeatureSpace(load_model(plan["feature_model"]))
    rec = recommend(
        df,
        space,
        objective=objective,
        sense=sense,
        constraints=constraints,
        targets=targets,
        seed=plan.get("seed", 0),
    )
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
        },
        "notes": [PROXY_NOTE] if "cpu_s" in df.columns else [],
        "targets": learned,
        "pareto": None
        if front is None
        else {
            "senses": {t: SENSES.get(t, "min") for t in front_cols},
            "front": front.reset_index().to_dict(orient="records"),
        },
        "recommendation": rec,
        "verification": verification,
    }
    rf = {t: v["cv"]["random_forest"]["r2"] for t, v in learned.items() if "cv" in v}
    out["summary"] = {
        "configurations": len(plan["configs"]),
        "measurements": len(df),
        "r2_random_forest": {t: (None if r is None else round(r["mean"], 3)) for t, r in rf.items()},
        "not_learnable": [t for t, v in learned.items() if v.get("status") == "not_learnable"],
        "recommended": None if rec is None else rec["features"],
        "verified": None
        if verification is None
        else {t: v.get("relative_error") for t, v in verification.items()},
    }
    atomic_write(root / "predictor.json", json.dumps(out, indent=1, default=str))
    return out
