"""Learning curve of the feature-model predictor on a real campaign (issue 12's bench): how many measured
configurations reach R² >= 0.94 for latency and for the resource proxy, against Pimp My LLM's 254.

    flock /tmp/vllm.lock python bench/predictor_curve.py --phase measure   (holds the lock only to measure)
    python bench/predictor_curve.py --phase evaluate                     (writes bench/predictor_curve_results.txt)
    python bench/predictor_curve.py --fake --uniform 30 --out /tmp/c     (the script's logic on a fake worker)

Model: feature model (a), transformers GenerationConfig (generation_config.uvl), with the in-process CPU
runner's constraints (tuner/campaign/hf_measurer.py: what `generate` refuses on CPU). Runner: the transformers
worker on the embedded SmolLM2-135M (float32/bfloat16 as the configuration says), one fixed prompt per
measurement, generation of exactly max_new_tokens (32/64/128: the model's levels; min_new_tokens = max).
Sample: pairwise (t-wise, seed 0) + `--uniform` uniform configurations; `--reps` repetitions of each, all in
one random order; every measurement persisted at once, so the campaign resumes where it stopped (rerun the
same command). `--budget-min`: stop measuring after that many minutes and evaluate what was measured.

Evaluation, per target (e2el_p50_ms, ttft_p50_ms, tpot_p50_ms, cpu_s; accuracy if measured):
  - learnability (ANOVA across configurations vs repetition noise), 5-fold CV of Random Forest, mean and
    ridge (R², MAE, MAPE, with their spread over folds), permutation importance (tuner/predictor/learn.py);
  - learning curves on held-out *uniform* configurations (the space's own distribution): training sets grown
    t-wise-first (pairwise configurations, then uniform ones) or from uniform configurations only, over
    random splits; the smallest n whose mean R² reaches 0.94.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from campaign_bench import add_campaign_options, measure_within, uptime  # noqa: E402

from tuner.campaign.hf_measurer import RUNNER_CONSTRAINTS, WorkerError, runner_model_text  # noqa: E402
from tuner.campaign.spec import CampaignSpec  # noqa: E402
from tuner.campaign.store import CampaignStore  # noqa: E402
from tuner.predictor.learn import cross_validate, evaluate, make_model, per_config  # noqa: E402

TARGETS = ["e2el_p50_ms", "ttft_p50_ms", "tpot_p50_ms", "cpu_s"]
ACCURACY = ["pass_at_1", "graded_base_share"]
GOAL = 0.94
HAND_WRITTEN = "\n## reading (written by hand"
SPLITS = 10
PAPER = (
    "Pimp My LLM (arXiv 2602.17697): R2 0.94 latency, 0.95 energy from 254 configurations x 10 repetitions"
)


def bench_model_text(levels: list[int] | None) -> str:
    """The runner's model (a); with `levels`, max_new_tokens's three levels replaced (short generations)."""
    text = runner_model_text()
    if not levels:
        return text
    found = re.findall(r"max_new_tokens_(\d+) \{value (\d+)\}", text)
    if len(found) != len(levels):
        raise SystemExit(f"--max-new-tokens: the model has {len(found)} levels, got {len(levels)}")
    new = iter(levels)  # one pass, by position: a new level never meets a later replacement
    return re.sub(
        r"max_new_tokens_\d+ \{value \d+\}",
        lambda _: "max_new_tokens_{0} {{value {0}}}".format(next(new)),
        text,
    )


def campaign_spec(args, uvl: Path) -> CampaignSpec:
    options = {"requests": args.requests, "fixed_length": True}
    if args.accuracy_tasks:
        options["accuracy"] = {
            "tasks": args.accuracy_tasks,
            "max_tokens": args.accuracy_max_tokens,
            "mode": "chat",
            "concurrency": args.accuracy_concurrency,
        }
    if args.fake:
        options["command"] = [sys.executable, str(ROOT / "tests" / "campaign" / "fake_hf_worker.py")]
    else:
        options.update({"spec": str(ROOT / "models" / "smollm2-cpu.yaml"), "threads": args.threads})
    return CampaignSpec.model_validate(
        {
            "feature_model": str(uvl),
            "sample": {"method": "twise", "t": 2, "seed": 0},
            "extra_uniform": args.uniform,
            "repetitions": args.reps,
            "order": args.order,
            "seed": 0,
            "measurer": "tuner.campaign.hf_measurer:from_options",
            "options": options,
            "max_configs": args.max_configs,
        }
    )


RECORDS = ROOT / "bench" / "predictor_curve_measurements.csv"
PLAN = ROOT / "bench" / "predictor_curve_plan.json.gz"
RUNS = ROOT / "bench" / "predictor_curve_runs.jsonl"


def restore(out: Path) -> None:
    """Rebuild the campaign directory from the committed records (plan, one row per measurement, the measure runs),
    so that the evaluation reruns from a fresh clone. The plan's paths are made this checkout's; the runner's model
    is regenerated and must count what the plan says."""
    import gzip

    import pandas as pd

    from probes.core.files import write_atomic
    from tuner.campaign.runner import load_model
    from tuner.features.space import FeatureSpace

    if (out / "restored.txt").exists():
        return
    if (out / "plan.json").exists():
        raise SystemExit(f"--from-records: {out} holds a measured campaign (use another --out)")
    plan = json.loads(gzip.decompress(PLAN.read_bytes()))
    uvl = out / "generation_config_cpu.uvl"
    count = FeatureSpace(load_model(str(uvl))).count()
    if count != plan["valid_configurations"]:
        raise SystemExit(
            f"--from-records: the runner's model counts {count}, the plan {plan['valid_configurations']}"
        )
    if "ordering" not in plan:  # a plan written before plans recorded it: rounds put every r0 first
        n = len(plan["configs"])
        plan["ordering"] = "rounds" if all(i.endswith("-r0") for i in plan["order"][:n]) else "shuffled"
    plan["feature_model"] = str(uvl)
    plan["options"]["spec"] = str(ROOT / "models" / "smollm2-cpu.yaml")
    store = CampaignStore(out)
    store.mdir.mkdir(parents=True, exist_ok=True)
    top = ("config_id", "repetition", "node", "seconds")
    for row in pd.read_csv(RECORDS).to_dict(orient="records"):
        figures = {k: v for k, v in row.items() if k not in top and not k.startswith("f:") and not pd.isna(v)}
        store.record(
            f"{row['config_id']}-r{row['repetition']}", {**{k: row[k] for k in top}, "figures": figures}
        )
    write_atomic(out / "plan.json", json.dumps(plan, indent=1))
    write_atomic(out / "bench_runs.jsonl", RUNS.read_text(encoding="utf-8"))
    store.save_table()
    write_atomic(out / "restored.txt", f"restored from {RECORDS.name}, {PLAN.name} and {RUNS.name}\n")


def split_curves(
    X,
    y,
    twise_ids,
    uniform_ids,
    sizes,
    *,
    test_n: int,
    splits: int,
    seed: int = 0,
    kind: str = "random_forest",
) -> dict:
    """R² of a Random Forest on `test_n` held-out uniform configurations, trained on the first n of
    (pairwise shuffled, then uniform shuffled) or of (uniform shuffled), over random splits."""
    rng = np.random.default_rng(seed)
    curves = {"twise_first": {}, "uniform_only": {}}
    for _ in range(splits):
        un = list(rng.permutation(uniform_ids))
        test, pool = un[:test_n], un[test_n:]
        orders = {"twise_first": list(rng.permutation(twise_ids)) + pool, "uniform_only": pool}
        for name, order in orders.items():
            for n in sizes:
                if n > len(order):
                    continue
                m = make_model(kind, seed).fit(X.loc[order[:n]], y.loc[order[:n]])
                pred = m.predict(X.loc[test])
                ss_res = float(((y.loc[test] - pred) ** 2).sum())
                ss_tot = float(((y.loc[test] - y.loc[test].mean()) ** 2).sum())
                curves[name].setdefault(n, []).append(1 - ss_res / ss_tot if ss_tot > 0 else float("nan"))
    return {
        name: [{"n": n, "r2_mean": float(np.mean(v)), "r2_sd": float(np.std(v, ddof=1)), "splits": len(v)}
               for n, v in sorted(c.items())]
        for name, c in curves.items()
    }  # fmt: skip


def reach(curve: list[dict], goal: float = GOAL) -> str:
    hit = next((c for c in curve if c["r2_mean"] >= goal), None)
    if hit is None:
        best = max(curve, key=lambda c: c["r2_mean"]) if curve else None
        return "not reached" + (f" (best {best['r2_mean']:.3f} at n={best['n']})" if best else "")
    return f"n={hit['n']} (R2 {hit['r2_mean']:.3f}±{hit['r2_sd']:.3f})"


def model_a_line() -> str:
    """Exact count and pairwise sampling time of model (a) itself, measured here (cf. bench/features_results.txt)."""
    from tuner.features import sampling
    from tuner.features.configs import load_bundled
    from tuner.features.space import FeatureSpace

    t0 = time.perf_counter()
    model = load_bundled("generation_config")
    space = FeatureSpace(model)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    count = space.count()
    count_s = time.perf_counter() - t0
    smp = sampling.twise(space, 2, 0)
    return (
        f"model (a) itself (generation_config.uvl): {len(space.names)} features, {len(model.constraints)} "
        f"constraints, {count} valid configurations, counted exactly in {count_s * 1000:.1f} ms (parse + BDD "
        f"{build:.2f} s); pairwise sample (seed 0) {len(smp.configs)} configurations in {smp.seconds:.2f} s, "
        f"100 % of valid pairs by construction (bench/features_results.txt: 63846792, 44 in 8.63 s)"
    )


def levels_note(uvl: Path) -> str:
    found = re.findall(r"max_new_tokens_(\d+) \{value", uvl.read_text()) if uvl.exists() else []
    if found == ["32", "64", "128"] or not found:
        return ""
    return f", max_new_tokens levels {'/'.join(found)} instead of 32/64/128 (short generations)"


def fmt_cv(cv: dict, kinds=("random_forest", "ridge", "mean")) -> str:
    parts = []
    for kind in kinds:
        c = cv[kind]
        mape = f", MAPE {c['mape']['mean'] * 100:.1f}±{c['mape']['sd'] * 100:.1f} %" if c.get("mape") else ""
        parts.append(
            f"{kind}: R2 {c['r2']['mean']:.3f}±{c['r2']['sd']:.3f}, MAE {c['mae']['mean']:.3g}±{c['mae']['sd']:.2g}{mape}"
        )
    return "; ".join(parts)


def report(args, out: Path) -> str:
    runs = [json.loads(line) for line in (out / "bench_runs.jsonl").read_text().splitlines()]
    store = CampaignStore(out)
    plan, df = store.plan(), store.table()
    by = {c["id"]: c["sampled_by"] for c in plan["configs"]}
    failed = df[df["error"].notna()] if "error" in df.columns else df.iloc[:0]
    ok = df.drop(index=failed.index)
    targets = TARGETS + [t for t in ACCURACY if t in ok.columns]
    n_cfg = ok["config_id"].nunique()
    sizes = sorted(
        {s for s in (5, 10, 15, 20, 25, 30, 40, 50, 60, 80, 100, 120, 140, 160, 180, 200) if s < n_cfg}
    )
    res = evaluate(ok, targets, k=5, curve_sizes=sizes, curve_repeats=SPLITS)
    lines = _run_lines(args, runs, plan, df, ok, failed, by, n_cfg)
    reached = []  # (target, learner and training order, held-out n, smallest n reaching the goal)
    for t in targets:
        lines += _target_lines(t, res[t], ok, by, sizes, reached)
    lines.append(f"## configurations needed for R2 >= {GOAL} on held-out uniform configurations (paper: 254)")
    lines += [f"  {t}, {name} ({test_n} held out): {hit}" for t, name, test_n, hit in reached]
    lines.append("")
    (out / "bench_evaluation.json").write_text(json.dumps(res, indent=1, default=str))
    return "\n".join(lines) + "\n"


def _run_lines(args, runs, plan, df, ok, failed, by, n_cfg) -> list[str]:
    """How the campaign was measured: the runs, the feature model, the sample, the sizes, what was refused."""
    s = plan["sampling"]
    reps = ok.groupby("config_id").size()
    lines = [f"# {r['command']}" for r in runs] + [f"# {args.command}", ""]
    for r in runs:
        lines.append(
            f"measure run {r['started']} UTC on {r['host']} ({r['cores']} cores): wall {r['wall_s']:.0f} s, "
            f"{r['measured']} measurements, {r['ended']}; uptime before: {r['uptime_before']}; after: {r['uptime_after']}"
        )
    if "host_load_1m" in ok.columns and len(ok):
        lines.append(
            f"load average at the end of each measurement: median {ok['host_load_1m'].median():.2f}, "
            f"max {ok['host_load_1m'].max():.2f} (2 cores)"
        )
    lines += [
        f"total measuring wall time {sum(r['wall_s'] for r in runs):.0f} s (= lock time held for measuring)",
        "",
        f"feature model: {Path(plan['feature_model']).name} = generation_config.uvl ({plan['library']}) + the CPU "
        f"runner's {len(RUNNER_CONSTRAINTS)} constraints{levels_note(Path(plan['feature_model']))}: {plan['features']} features, {plan['constraints']} constraints, "
        f"{plan['valid_configurations']} valid configurations (exact, BDD).",
        model_a_line(),
        f"sample: pairwise seed {s['seed']}: {sum(v == 't-wise' for v in by.values())} configurations in "
        f"{s['seconds']:.2f} s + {sum(v == 'uniform' for v in by.values())} uniform; 2-wise coverage of the "
        f"plan {s['coverage_2wise']:.4f}",
        f"sizes chosen: {plan['repetitions']} repetitions, "
        + (
            "in rounds (each a fresh random order), "
            if plan.get("ordering") == "rounds"
            else "in one random order, "
        )
        + f"{plan['options'].get('requests')} request(s) per measurement (fixed prompt, exactly max_new_tokens "
        f"generated), {plan['options'].get('threads')} torch threads"
        + (
            f", accuracy {plan['options']['accuracy']}"
            if plan["options"].get("accuracy")
            else ", no accuracy"
        )
        + f"; why: {runs[0].get('why', args.why) if runs else args.why}",
        f"measured: {len(df)} of {len(plan['order'])} planned measurements; {n_cfg} configurations measured "
        f"({int((reps >= 2).sum())} with >= 2 repetitions); {len(failed)} measurements refused by the library "
        f"({failed['config_id'].nunique() if len(failed) else 0} configurations)",
        f"runner: transformers worker (tuner/campaign/hf_measurer.py), energy {ok['energy'].iloc[0] if len(ok) else '?'}",
        f"paper: {PAPER}",
        "",
    ]
    if len(failed):
        for err, n in failed["error"].value_counts().items():
            lines.append(f"  refused x{n}: {err[:160]}")
        lines.append("")
    return lines


def _target_lines(t: str, r: dict, ok, by: dict, sizes: list[int], reached: list) -> list[str]:
    """One target's learnability, cross-validation and learning curves; adds to `reached` the smallest n
    that reaches the goal on held-out uniform configurations, per learner and training order."""
    lines: list[str] = []
    if "cv" not in r:
        return [f"## {t}: {r.get('reason')}"]
    lrn = r["learnability"]
    lines.append(
        f"## {t}: {r['configurations']} configurations; range {ok[t].min():.4g}..{ok[t].max():.4g}; "
        f"learnable={lrn['learnable']}"
        + (
            f" (ANOVA p={lrn['anova_p']:.2g}, between-config sd {lrn['between_config_sd']:.3g}, "
            f"repetition sem {lrn['repetition_sem']:.3g})"
            if "anova_p" in lrn
            else f" ({lrn['reason']})"
        )
    )
    lines.append("  5-fold CV: " + fmt_cv(r["cv"]))
    X, y = per_config(ok, t)
    if (y > 0).all():  # the same models on log(y), scored on the original scale
        kinds = ("random_forest", "ridge", "lasso_pairs")
        r["cv_log"] = {k: cross_validate(X, y, f"{k}_log", 5, 0) for k in kinds}
        lines.append("  5-fold CV, learned on log(y): " + fmt_cv(r["cv_log"], kinds))
    lines.append(
        f"  learning curve, random subsets (RF, R2 on the remaining configurations, {SPLITS} repeats): "
        + "; ".join(f"n={c['n']}: {c['r2_mean']:.3f}±{c['r2_sd']:.3f}" for c in r["learning_curve"])
    )
    lines.append(f"    reaches R2 >= {GOAL}: {reach(r['learning_curve'])}")
    tw = [i for i in y.index if by[i] == "t-wise"]
    un = [i for i in y.index if by[i] == "uniform"]
    test_n = max(5, len(un) // 3)
    if len(un) - test_n >= 5:
        curves = split_curves(X, y, tw, un, sizes, test_n=test_n, splits=SPLITS)
        if (y > 0).all():
            for kind, label in (
                ("random_forest_log", "RF on log(y)"),
                ("lasso_pairs_log", "lasso_pairs on log(y)"),
            ):
                logc = split_curves(X, y, tw, un, sizes, test_n=test_n, splits=SPLITS, kind=kind)
                curves.update({f"{k}, {label}": v for k, v in logc.items()})
        for name, curve in curves.items():
            reached.append((t, name, test_n, reach(curve)))
            lines.append(
                f"  {name} (R2 on {test_n} held-out uniform configurations, {SPLITS} splits): "
                + "; ".join(f"n={c['n']}: {c['r2_mean']:.3f}±{c['r2_sd']:.3f}" for c in curve)
            )
            lines.append(f"    reaches R2 >= {GOAL}: {reach(curve)}")
        r["split_curves"] = curves
    lines.append(
        "  top features (permutation importance): "
        + ", ".join(f"{i['feature']} {i['mean']:.3f}" for i in r["importance"][:5])
    )
    lines.append("")
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--out", default=None, help="campaign directory (default out/bench/predictor-curve[-records])"
    )
    p.add_argument(
        "--from-records", action="store_true",
        help="evaluate the committed records (bench/predictor_curve_measurements.csv and plan) instead of measuring",
    )  # fmt: skip
    add_campaign_options(p, uniform=48, order="rounds", budget_min=38.0)
    p.add_argument("--requests", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-configs", type=int, default=None, help="cap (tiny trial runs)")
    p.add_argument(
        "--max-new-tokens",
        default="",
        help="replace the model's max_new_tokens levels (32,64,128), e.g. 8,16,32",
    )
    p.add_argument("--accuracy-max-tokens", type=int, default=128)
    p.add_argument("--phase", choices=("measure", "evaluate", "both"), default="both")
    p.add_argument(
        "--fake", action="store_true", help="fake worker (tests the script, measures nothing real)"
    )
    p.add_argument(
        "--results", default=None, help="results file (default: bench/predictor_curve_results.txt)"
    )
    p.add_argument("--why", default="sized to finish within about 40 minutes of lock time on the 2-core host")
    args = p.parse_args()
    args.command = "python bench/predictor_curve.py " + shlex.join(sys.argv[1:])
    if args.from_records and args.phase != "evaluate":
        raise SystemExit("--from-records goes with --phase evaluate (the records are what was measured)")
    default = "predictor-curve-records" if args.from_records else "predictor-curve"
    out = Path(args.out) if args.out else ROOT / "out" / "bench" / default
    out.mkdir(parents=True, exist_ok=True)
    uvl = out / "generation_config_cpu.uvl"
    if not uvl.exists():
        levels = [int(x) for x in args.max_new_tokens.split(",") if x.strip()]
        uvl.write_text(bench_model_text(levels), encoding="utf-8")
    if args.from_records:
        restore(out)
    if args.phase in ("measure", "both"):
        started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")
        before, done = uptime(), len(CampaignStore(out).done())
        wall, ended = measure_within(
            campaign_spec(args, uvl), out, args.budget_min * 60, attempts=3, retry_on=(WorkerError,)
        )
        run = {
            "command": args.command, "started": started, "host": os.uname().nodename, "cores": os.cpu_count(),
            "wall_s": wall, "ended": ended, "measured": len(CampaignStore(out).done()) - done,
            "uptime_before": before, "uptime_after": uptime(), "why": args.why,
        }  # fmt: skip
        with open(out / "bench_runs.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(run) + "\n")
    if args.phase == "measure":
        return
    text = report(args, out)
    results = Path(args.results) if args.results else ROOT / "bench" / "predictor_curve_results.txt"
    if args.fake and args.results is None:
        results = out / "predictor_curve_results.txt"
    if results.exists():  # the hand-written reading (and history) below the figures survive a rerun
        kept = results.read_text(encoding="utf-8")
        if (i := kept.find(HAND_WRITTEN)) >= 0:
            text += kept[i + 1 :]
    results.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
