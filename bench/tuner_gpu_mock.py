"""The SLO-Tuner against the mock server's serving model calibrated to the SLO-Tuner paper's TinyLlama-on-vLLM
figures (issue 41 item 5). A SIMULATION, NOT A MEASUREMENT: the deployment is the law of
probes/targets/serving_model.py's `tinyllama-vllm-paper` profile, served over real sockets on this host to the
real load client; no GPU and no TinyLlama are involved.

Three parts, each printed with its figures:
  law      — the serving model's TPOT law recovered from the client's own figures: closed loop at 1..32 users,
             8-token prompts (prefill negligible), 128 output tokens; least-squares TPOT = a + b·batch vs the
             profile's base_ms and per_seq_ms
  default  — the paper's default point on the profile (32 users, max_num_seqs 256, 512 prompt / 128 output
             tokens, 96 requests a run): p99 E2EL and goodput under the 1.2 s p99 SLO, 3 runs pooled, vs the
             paper's 1.36 s and 8 req/s
  tune     — `tuner.tune` (hill climb, restarts, confirmation) from that default over concurrency × max_num_seqs,
             the mock restarted per max_num_seqs; its recommendation beside the paper's (0.70 s, 15 req/s)

Usage: python bench/tuner_gpu_mock.py [--budget-s 420] > bench/tuner_gpu_mock_results.txt
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

from probes.load.metrics import request_latencies
from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.targets.mock_server import MockServerConfig, running
from probes.targets.serving_model import PROFILES
from tuner import OperatingPoint, TunerSpec, TuningLoad, tune
from tuner.estimates import compute_figures
from tuner.serving_mock import ServingMockEvaluator

ROOT = Path(__file__).resolve().parents[1]
PROFILE = PROFILES["tinyllama-vllm-paper"]
SLO_MS = 1200.0
PAPER_DEFAULT = {"p99_s": 1.36, "goodput_rps": 8.0}
PAPER_TUNED = {"p99_s": 0.70, "goodput_rps": 15.0}
WORKLOAD = TuningLoad(mode="closed", input_len=512, output_len=128, num_requests=96)
DEFAULT = OperatingPoint(concurrency=32, max_num_seqs=256, spec_k=0)


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def law() -> None:
    print(
        "## law — TPOT = a + b·batch, from the client's figures (closed loop, batch = users ≤ max_num_seqs)"
    )
    users = [1, 2, 4, 8, 16, 32]
    tpots = []
    with running(MockServerConfig(serving=PROFILE)) as url:
        for c in users:
            point = LoadPoint.at(concurrency=c, num_requests=4 * c, input_len=8, output_len=128, seed=0)
            res = asyncio.run(run_point(url, "mock-model", point, SLO()))
            lats = [request_latencies(r) for r in res.records if r.ok]
            tpots.append(statistics.median(x["tpot_ms"] for x in lats))
            print(
                f"  users {c:>3}: median TPOT {tpots[-1]:.3f} ms (law {PROFILE.step_ms(c, 0):.3f} ms), n = {len(lats)}"
            )
    b, a = np.polyfit(users, tpots, 1)
    worst = max(
        abs(t - PROFILE.step_ms(c, 0)) / PROFILE.step_ms(c, 0) for c, t in zip(users, tpots, strict=True)
    )
    print(
        f"  fit: a = {a:.3f} ms (stated {PROFILE.base_ms:g}), b = {b:.4f} ms/seq (stated {PROFILE.per_seq_ms:g}); "
        f"largest |measured − law| / law = {100 * worst:.1f} %"
    )


def _spec(budget_s: float) -> TunerSpec:
    return TunerSpec(
        slo_p99_ms=SLO_MS,
        knobs={
            "concurrency": [4, 8, 12, 16, 20, 24, 32, 48],
            "max_num_seqs": [16, 32, 64, 128, 256],
            "spec_k": [0],
        },
        start=DEFAULT,
        workload=WORKLOAD,
        time_budget_s=budget_s,
        max_evaluations=30,
        restarts=1,
        seed=0,
    )


def default(spec: TunerSpec) -> None:
    print("## default — the paper's default point on the profile (3 runs of 96 requests, pooled)")
    with ServingMockEvaluator(PROFILE, slo_e2el_ms=SLO_MS) as ev:
        evaluation = ev.evaluate(DEFAULT, WORKLOAD, repeats=3, seed=10_000)
    fig = compute_figures(evaluation.runs, DEFAULT, spec, seed=0)
    print(
        f"  {DEFAULT.label()}: p99 E2EL {fig.p99.value / 1000:.2f} s [{fig.p99.ci_low / 1000:.2f}, "
        f"{fig.p99.ci_high / 1000:.2f}], goodput {fig.goodput.value:.1f} req/s [{fig.goodput.ci_low:.1f}, "
        f"{fig.goodput.ci_high:.1f}], throughput {fig.throughput_rps:.1f} req/s, n = {fig.completed}"
    )
    print(
        f"  paper (TinyLlama on vLLM, measured): p99 {PAPER_DEFAULT['p99_s']} s, goodput {PAPER_DEFAULT['goodput_rps']} req/s"
    )


def tuned(spec: TunerSpec) -> None:
    print(f"## tune — tuner.tune on the profile, budget {spec.time_budget_s:g} s (restarts charged)")
    t0 = time.perf_counter()
    with ServingMockEvaluator(PROFILE, slo_e2el_ms=SLO_MS) as ev:
        result = tune(ev, spec)
    wall = time.perf_counter() - t0
    for entry in result.trace:
        fig = entry.figures
        figs = (
            "no figures"
            if fig is None
            else f"p99 {fig.p99.value / 1000:.2f} s, goodput {fig.goodput.value:.1f} req/s"
        )
        print(f"  [{entry.index:>2}] {entry.decision:<8} {entry.point.label()}: {figs}")
    print(
        f"  stop: {result.stop_reason}; {result.budget.evaluations_used} evaluations, {result.budget.time_used_s:.0f} s charged, {wall:.0f} s wall"
    )
    print("  | point | source | p99 E2EL (s) | goodput (req/s) |")
    print("  |---|---|---:|---:|")
    for name, pf in (("default", result.default), ("recommended", result.recommended)):
        if hasattr(pf, "figures"):
            f = pf.figures
            print(
                f"  | {name}: {pf.point.label()} | this bench, SIMULATED (serving model) | "
                f"{f.p99.value / 1000:.2f} [{f.p99.ci_low / 1000:.2f}, {f.p99.ci_high / 1000:.2f}] | "
                f"{f.goodput.value:.1f} [{f.goodput.ci_low:.1f}, {f.goodput.ci_high:.1f}] |"
            )
        else:
            print(f"  | {name} | not measured: {pf.reason} | | |")
    print(
        f"  | default | paper, MEASURED (TinyLlama on vLLM) | {PAPER_DEFAULT['p99_s']:.2f} | {PAPER_DEFAULT['goodput_rps']:.0f} |"
    )
    print(
        f"  | tuned | paper, MEASURED (TinyLlama on vLLM) | {PAPER_TUNED['p99_s']:.2f} | {PAPER_TUNED['goodput_rps']:.0f} |"
    )
    print(f"  justification: {result.justification}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget-s", type=float, default=420.0)
    ap.add_argument("--parts", default="law,default,tune")
    args = ap.parse_args()
    parts = args.parts.split(",")
    print(f"# python bench/tuner_gpu_mock.py --budget-s {args.budget_s:g} --parts {args.parts}")
    print(
        f"# commit {_commit()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
        f"{os.cpu_count()} cores, load1 {os.getloadavg()[0]:.1f} at start"
    )
    print(f"# SIMULATION, not a measurement: profile tinyllama-vllm-paper, {PROFILE.describe()}")
    print(
        f"# workload: closed loop, {WORKLOAD.input_len} prompt / {WORKLOAD.output_len} output tokens, {WORKLOAD.num_requests} requests a run; SLO p99 E2EL ≤ {SLO_MS / 1000:g} s"
    )
    spec = _spec(args.budget_s)
    t0 = time.perf_counter()
    if "law" in parts:
        law()
    if "default" in parts:
        default(spec)
    if "tune" in parts:
        tuned(spec)
    print(f"# {time.perf_counter() - t0:.0f} s wall, load1 {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
