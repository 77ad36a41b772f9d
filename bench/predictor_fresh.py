"""Out-of-sample check of the predictor (issue 12): fresh uniform configurations of the curve bench's feature model,
none among its 254, measured live with the same runner and compared with what the model chosen by CV predicts from
the 254 (tuner.predictor.learn.select_model: its 95 % interval from its own out-of-fold error).

    flock /tmp/vllm.lock python bench/predictor_fresh.py --phase measure --fresh 12 --budget-min 8
    python bench/predictor_fresh.py --phase evaluate      (writes bench/predictor_fresh_results.txt)

Training data: the committed records of bench/predictor_curve.py (restored into out/bench/predictor-curve-records).
Fresh sample: uniform (count-weighted BDD walk), seed 1000, `--fresh` configurations x `--reps` repetitions in rounds;
every measurement persisted at once (rerun to resume); the measurements are copied to
bench/predictor_fresh_measurements.csv so that the evaluation reruns from a fresh clone.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402
from campaign_bench import measure_within, uptime  # noqa: E402
from predictor_curve import TARGETS, bench_model_text, restore  # noqa: E402
from sklearn.metrics import mean_absolute_percentage_error, r2_score  # noqa: E402

from tuner.campaign.hf_measurer import WorkerError  # noqa: E402
from tuner.campaign.spec import CampaignSpec  # noqa: E402
from tuner.campaign.store import CampaignStore  # noqa: E402

TRAIN = ROOT / "out" / "bench" / "predictor-curve-records"
FRESH = ROOT / "out" / "bench" / "predictor-fresh"
RECORDS = ROOT / "bench" / "predictor_fresh_measurements.csv"
RUNS = ROOT / "bench" / "predictor_fresh_runs.jsonl"
SEED = 1000


def training_store() -> CampaignStore:
    TRAIN.mkdir(parents=True, exist_ok=True)
    uvl = TRAIN / "generation_config_cpu.uvl"
    if not uvl.exists():
        uvl.write_text(bench_model_text(None), encoding="utf-8")
    restore(TRAIN)
    return CampaignStore(TRAIN)


def fresh_spec(plan: dict, n: int, reps: int) -> CampaignSpec:
    return CampaignSpec.model_validate(
        {
            "feature_model": plan["feature_model"],
            "sample": {"method": "uniform", "n": n, "seed": SEED},
            "repetitions": reps,
            "order": "rounds",
            "seed": SEED,
            "measurer": plan["measurer"],
            "options": plan["options"],
        }
    )


def fresh_table(args) -> pd.DataFrame:
    """The fresh measurements: the campaign directory where one was measured here, else the committed copy."""
    if (FRESH / "plan.json").exists():
        return CampaignStore(FRESH).table()
    if RECORDS.exists():
        return pd.read_csv(RECORDS)
    raise SystemExit(f"no fresh measurements: run --phase measure first (or restore {RECORDS.name})")


def evaluate(train: pd.DataFrame, fresh: pd.DataFrame) -> list[str]:
    from tuner.predictor.learn import interval_95, make_model, per_config, select_model

    if "error" in fresh.columns:  # a configuration the library refused has no figures
        fresh = fresh[fresh["error"].isna()]
    known = set(train["config_id"])
    overlap = sorted(set(fresh["config_id"]) & known)
    fresh = fresh[~fresh["config_id"].isin(known)]
    lines = [
        f"fresh: {fresh['config_id'].nunique()} configurations ({len(fresh)} measurements) not among the "
        f"{len(known)} trained on" + (f"; {len(overlap)} drawn again and left out" if overlap else ""),
        "",
    ]
    for t in TARGETS:
        X, y = per_config(train, t)
        sel = select_model(X, y)
        model = make_model(sel["kind"]).fit(X, y)
        forest = make_model("random_forest").fit(X, y)
        g = fresh.dropna(subset=[t]).groupby("config_id")
        measured = g[t].mean()
        Xf = (
            g[[c for c in fresh.columns if c.startswith("f:")]]
            .first()
            .reindex(columns=X.columns, fill_value=0)
        )
        pred = model.predict(Xf)
        lo, hi = interval_95(sel["error"], pred)
        inside = (measured.to_numpy() >= lo) & (measured.to_numpy() <= hi)
        lines.append(
            f"## {t}: chosen {sel['kind']} (5-fold CV R2 {sel['cv']['r2']['mean']:.3f} on {sel['configurations']} "
            f"configurations; error {sel['error']['scale']} sd {sel['error']['sd']:.3g})"
        )
        lines.append(
            f"  on {len(measured)} fresh configurations: R2 {r2_score(measured, pred):.3f}, MAPE {100 * mean_absolute_percentage_error(measured, pred):.1f} %, "
            f"measured mean inside the 95 % interval {int(inside.sum())}/{len(inside)}; Random Forest "
            f"(the paper's learner): R2 {r2_score(measured, forest.predict(Xf)):.3f}, MAPE {100 * mean_absolute_percentage_error(measured, forest.predict(Xf)):.1f} %"
        )
        for cid, m, p, a, b, ok in zip(measured.index, measured, pred, lo, hi, inside, strict=True):
            reps = int(g.size()[cid])
            lines.append(
                f"    {cid}: measured {m:.4g} (n={reps}), predicted {p:.4g} [{a:.4g}, {b:.4g}]"
                + ("" if ok else "  OUTSIDE")
            )
        lines.append("")
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--phase", choices=("measure", "evaluate"), default="evaluate")
    p.add_argument("--fresh", type=int, default=12, help="fresh uniform configurations")
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--budget-min", type=float, default=10.0, help="stop measuring after this many minutes")
    args = p.parse_args()
    command = "python bench/predictor_fresh.py " + shlex.join(sys.argv[1:])
    train_store = training_store()
    train = train_store.table()
    if args.phase == "measure":
        started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")
        before, done = uptime(), len(CampaignStore(FRESH).done())
        spec = fresh_spec(train_store.plan(), args.fresh, args.reps)
        wall, ended = measure_within(spec, FRESH, args.budget_min * 60, attempts=3, retry_on=(WorkerError,))
        run = {
            "command": command, "started": started, "host": os.uname().nodename, "cores": os.cpu_count(),
            "wall_s": round(wall, 1), "ended": ended, "measured": len(CampaignStore(FRESH).done()) - done,
            "uptime_before": before, "uptime_after": uptime(),
        }  # fmt: skip
        with open(RUNS, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(run) + "\n")
        CampaignStore(FRESH).table().to_csv(RECORDS, index=False)
        return
    runs = [json.loads(line) for line in RUNS.read_text().splitlines()] if RUNS.exists() else []
    lines = [f"# {r['command']}" for r in runs] + [f"# {command}", ""]
    lines += [
        f"measure run {r['started']} UTC on {r['host']} ({r['cores']} cores): wall {r['wall_s']:.0f} s, "
        f"{r['measured']} measurements, {r['ended']}; uptime before: {r['uptime_before']}; after: {r['uptime_after']}"
        for r in runs
    ]
    lines += [
        f"trained on: bench/predictor_curve_measurements.csv ({train['config_id'].nunique()} configurations, "
        f"{len(train)} measurements); the model per figure chosen by 5-fold CV (tuner.predictor.learn.select_model)",
    ]
    lines += evaluate(train, fresh_table(args))
    text = "\n".join(lines) + "\n"
    (ROOT / "bench" / "predictor_fresh_results.txt").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
