"""The feature-model predictor against the mock server's serving model (issue 41 item 5: "the tuner and
predictor run against it too"). A SIMULATION, NOT A MEASUREMENT: the deployment is the law of
probes/targets/serving_model.py's profile (default `tinyllama-vllm-paper`), served over real sockets on this
host to the real load client; no GPU and no model are involved.

The campaign: feature model `vllm_serving` (the vLLM knobs: sampling parameters and engine arguments), a
pairwise (t-wise, t = 2) sample to learn from, `--uniform` uniform configurations held out; one measurement
each by `tuner.serving_mock:mock_measurer` — a closed loop of `--users` users and `--requests` requests of
`--input-len` / `--output-len` tokens, the mock restarted with the configuration's max_num_seqs and
max_num_batched_tokens (the only options the law has; every other option has no effect on it, so a learner
that finds effects there finds noise). Per figure (E2EL, TTFT, TPOT p50): the predictor's own model choice
(tuner.predictor.learn.select_model: highest 5-fold CV R² on the training configurations), fitted on them
and scored on the held-out ones (R², MAPE, held-out values inside its 95 % interval), beside the mean's R².

Usage: PYTHONPATH=. .venv/bin/python bench/predictor_gpu_mock.py [--uniform 30] > bench/predictor_gpu_mock_results.txt
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import r2_score

from tuner.campaign.runner import run_campaign
from tuner.campaign.spec import CampaignSpec, SampleSpec
from tuner.predictor.learn import interval_95, make_model, per_config, select_model

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ["e2el_p50_ms", "ttft_p50_ms", "tpot_p50_ms"]


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="tinyllama-vllm-paper")
    ap.add_argument("--uniform", type=int, default=30, help="uniform configurations held out")
    ap.add_argument("--users", type=int, default=32)
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=16)
    args = ap.parse_args()
    print(f"# PYTHONPATH=. .venv/bin/python bench/predictor_gpu_mock.py {shlex.join(sys.argv[1:])}".rstrip())
    print(
        f"# commit {_commit()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
        f"load1 {os.getloadavg()[0]:.1f}"
    )
    print(f"# A SIMULATION, NOT A MEASUREMENT: the serving model's profile {args.profile}, not a GPU.")
    options = {"profile": args.profile, "users": args.users, "requests": args.requests,
               "input_len": args.input_len, "output_len": args.output_len}  # fmt: skip
    spec = CampaignSpec(feature_model="vllm_serving", sample=SampleSpec(method="twise", t=2),
                        extra_uniform=args.uniform, repetitions=1, measurer="tuner.serving_mock:mock_measurer",
                        options=options)  # fmt: skip
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = run_campaign(spec, Path(tmp) / "campaign")
        plan, df = store.plan(), store.table()
    seconds = time.perf_counter() - t0
    twise = {c["id"] for c in plan["configs"] if c["sampled_by"] != "uniform"}
    held = {c["id"] for c in plan["configs"] if c["sampled_by"] == "uniform"}
    print(
        f"# campaign: {len(plan['configs'])} configurations measured once each in {seconds:.0f} s: "
        f"{len(twise)} pairwise (learned from), {len(held)} uniform (held out); {args.users} users, "
        f"{args.requests} requests of {args.input_len} / {args.output_len} tokens a measurement"
    )
    print()
    print("| figure | model (5-fold CV on training) | CV R² | held-out R² | mean's held-out R² | held-out MAPE | held-out inside 95 % interval | held-out range (ms) |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for target in TARGETS:
        X, y = per_config(df, target)
        train, test = X.index.isin(list(twise)), X.index.isin(list(held))
        chosen = select_model(X[train], y[train])
        model = make_model(chosen["kind"]).fit(X[train], y[train])
        pred = model.predict(X[test])
        truth = y[test].to_numpy()
        lo, hi = interval_95(chosen["error"], pred)
        mean_r2 = r2_score(truth, np.full_like(truth, y[train].mean()))
        cv = chosen["cv"]["r2"]["mean"] if chosen["cv"]["r2"] else float("nan")
        print(
            f"| {target} | {chosen['kind']} | {cv:.3f} | {r2_score(truth, pred):.3f} | {mean_r2:.3f} | "
            f"{100 * np.mean(np.abs(pred - truth) / truth):.1f} % | {np.mean((truth >= lo) & (truth <= hi)):.0%} "
            f"of {len(truth)} | {truth.min():.0f}–{truth.max():.0f} |"
        )


if __name__ == "__main__":
    main()
