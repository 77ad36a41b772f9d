"""A real (small) campaign on the embedded vLLM target and what the predictor learns from it.

    flock /tmp/vllm.lock python bench/predictor_live.py   (writes bench/predictor_live_results.txt)

Model: bench/live_sampling.uvl (vLLM per-request sampling parameters; engine fixed, so one server start).
Sample: pairwise (t-wise, seed 0) plus 24 uniform configurations, 2 repetitions each in random order;
each measurement = 3 sequential streamed completions of up to 32 tokens (64-word prompts), latency
percentiles and the CPU-seconds proxy of the server's process group. Resumable: rerun to finish.

    flock /tmp/vllm.lock python bench/predictor_live.py --accuracy-tasks 5
        also HumanEval+ accuracy per measurement (the first 5 tasks, chat, up to 128 tokens; its own campaign
        dir and results file): pass_at_1, pass_at_1_base, graded_base_share, graded_plus_share
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from campaign_bench import add_campaign_options, measure_within  # noqa: E402

from tuner.campaign.spec import CampaignSpec  # noqa: E402
from tuner.campaign.store import CampaignStore  # noqa: E402
from tuner.predictor.learn import evaluate  # noqa: E402


def twise_vs_uniform(df, plan, targets) -> list[str]:
    """Train on the pairwise configurations, or on as many uniform ones; test on the remaining uniform ones.
    Only for learnable targets: a figure that does not vary beyond its noise gets its statement, not an R²."""
    import numpy as np
    from sklearn.metrics import r2_score

    from tuner.predictor.learn import make_model, per_config

    tw = [c["id"] for c in plan["configs"] if c["sampled_by"] == "t-wise"]
    un = [c["id"] for c in plan["configs"] if c["sampled_by"] == "uniform"]
    out = []
    for t in targets:
        X, y = per_config(df, t)
        tw_ids, un_ids = [i for i in tw if i in y.index], [i for i in un if i in y.index]
        k = min(len(tw_ids), len(un_ids) // 2)
        if k < 3:
            continue
        rng = np.random.default_rng(0)
        r_tw, r_un = [], []
        for _ in range(10):
            perm = list(rng.permutation(un_ids))
            test, train_un = perm[k:], perm[:k]
            for train, acc in ((tw_ids[:k], r_tw), (train_un, r_un)):
                m = make_model("random_forest").fit(X.loc[train], y.loc[train])
                acc.append(r2_score(y.loc[test], m.predict(X.loc[test])))
        out.append(
            f"{t}: trained on {k} configs, R2 on held-out uniform configs: pairwise "
            f"{np.mean(r_tw):.2f}±{np.std(r_tw):.2f} vs uniform {np.mean(r_un):.2f}±{np.std(r_un):.2f} (10 splits)"
        )
    return out


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_campaign_options(parser, uniform=24, order="shuffled", budget_min=None)
    args = parser.parse_args()
    command = "python bench/predictor_live.py " + " ".join(sys.argv[1:])
    suffix = f"-acc{args.accuracy_tasks}" if args.accuracy_tasks else ""
    out_dir = ROOT / "out" / f"bench-predictor-live{suffix}"
    options = {"spec": str(ROOT / "models" / "smollm2-cpu.yaml"), "requests": 3, "output_len": 32}
    if args.accuracy_tasks:
        options["accuracy"] = {
            "tasks": args.accuracy_tasks,
            "max_tokens": 128,
            "mode": "chat",
            "concurrency": args.accuracy_concurrency,
        }
    spec = CampaignSpec.model_validate(
        {
            "feature_model": str(ROOT / "bench" / "live_sampling.uvl"),
            "sample": {"method": "twise", "t": 2, "seed": 0},
            "extra_uniform": args.uniform,
            "repetitions": args.reps,
            "order": args.order,
            "measurer": "tuner.campaign.vllm_measurer:from_options",
            "options": options,
        }
    )
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    budget_s = None if args.budget_min is None else args.budget_min * 60
    wall, ended = measure_within(spec, out_dir, budget_s)
    store = CampaignStore(out_dir)
    df = store.table()
    plan = store.plan()
    targets = ["e2el_p50_ms", "ttft_p50_ms", "tpot_p50_ms", "cpu_s"]
    if args.accuracy_tasks:
        targets += ["pass_at_1", "pass_at_1_base", "graded_base_share", "graded_plus_share"]
    res = evaluate(df, targets, k=5, curve_sizes=(10, 20, 30, 40))
    tw_ids = {c["id"] for c in plan["configs"] if c["sampled_by"] == "t-wise"}
    lines = [
        f"# flock /tmp/vllm.lock {command}",
        f"campaign: {len(plan['configs'])} configurations ({len(tw_ids)} pairwise + uniform) x {plan['repetitions']}"
        f" repetitions planned; {len(df)} measurements of {df['config_id'].nunique()} configurations; this run "
        f"started {started}, wall {wall:.0f} s, {ended}; campaign dir {out_dir.relative_to(ROOT)}",
        f"model: {plan['features']} features, {plan['valid_configurations']} valid configurations",
    ]
    for t in targets:
        r = res[t]
        if "cv" not in r:
            lines.append(f"{t}: {r}")
            continue
        if r.get("status") == "not_learnable":
            mean = df[t].mean()
            lines.append(
                f"{t}: mean {mean:.3g} over {len(df)} measurements; {r['learnability']['statement']}"
            )
            continue
        cv = {k: v["r2"] for k, v in r["cv"].items()}
        lines.append(
            f"{t}: learnable={r['learnability']['learnable']} (ANOVA p={r['learnability']['anova_p']:.2g}, "
            f"between-config sd {r['learnability']['between_config_sd']:.3g}, repetition sem "
            f"{r['learnability']['repetition_sem']:.3g}); CV R2 "
            + ", ".join(f"{k} {v['mean']:.3f}±{v['sd']:.3f}" for k, v in cv.items() if v)
        )
        lines.append(
            "  learning curve (RF, held-out R2): "
            + "; ".join(f"n={c['n']}: {c['r2_mean']:.2f}±{c['r2_sd']:.2f}" for c in r["learning_curve"])
        )
        lines.append(
            "  top features: " + ", ".join(f"{i['feature']} {i['mean']:.3f}" for i in r["importance"][:4])
        )
    learnable = [t for t in targets if res[t].get("learnability", {}).get("learnable")]
    lines += twise_vs_uniform(df, plan, learnable)
    text = "\n".join(lines) + "\n"
    (ROOT / "bench" / f"predictor_live{suffix.replace('-', '_')}_results.txt").write_text(text)
    (out_dir / "bench_evaluation.json").write_text(json.dumps(res, indent=1, default=str))
    print(text)


if __name__ == "__main__":
    main()
