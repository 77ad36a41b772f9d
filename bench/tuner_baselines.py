"""Grid, random search, Optuna TPE and the hill climber on the simulator, at equal budgets.

Figure of merit: evaluations needed until one evaluation reaches ≥ 98 % of the best goodput the full
grid finds (vLLM auto_tune style: every combination once). Goal: ≤ 20 % of the grid's evaluations.
Each evaluation is a noisy simulated run (step jitter, per-evaluation seed) of the bench workload.
The climber also runs with a deliberately mis-calibrated simulator (step costs ×1.3/×0.7,
acceptance ×0.5) as pre-screen, and with an exact one (the target's own parameters, independent
noise), counting only the evaluations made on the "target". It runs with the configured number of
restarts (TunerSpec.restarts); `--restarts 0,2` compares several.

Second figure, "pick": seeds in which the point the method would recommend has an expected score (mean
over 100 fresh simulated runs) ≥ 98 % of the best expected score in the grid; "pick S" is the median
expected score of the picks (req/s). It judges the choice, not the luckiest evaluation, which matters
where the best-goodput points sit on the p99 SLO's edge: goodput counts their requests within the SLO,
the score also charges their p99 beyond it. Two picks per method: "best" = its best measured score (the
climber's search_best), "conf" = after the same confirmation (tuner.confirm: fresh interleaved runs of
the best, the default and rivals within noise; TunerSpec.confirm_runs), which the climber runs itself
within its budget and which the bench applies to grid, random and TPE after their search. "evals" counts
every evaluation on the target, confirmation included.

Third figure, "robust": the pick must also hold when measured again, as the live criterion asks. Each
point's true P(SLO) is the share of its 100 fresh runs whose p99 meets the SLO; the robust best is the
best expected score among points with P(SLO) ≥ TunerSpec.slo_probability (0.9), and a pick is robust
when its own P(SLO) ≥ 0.9 and its expected score ≥ 98 % of the robust best. "pick" tolerates a point that
misses the SLO in, say, 17 % of fresh runs if its score is high; "robust" does not.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import optuna
from tuner_common import EMBEDDED_LIKE, WORKLOAD, bench_config

from tuner import OperatingPoint, SimParams, SimulatorEvaluator, TunerSpec
from tuner.climb import Climb
from tuner.confirm import confirm
from tuner.estimates import compute_figures, good_mask, p99_of, score_value, slo_values_ms
from tuner.findings import build_result

SEEDS = range(10)
SLOS_MS = (4000.0, 5000.0, 7000.0, 10000.0)
VALUE_RUNS = 100  # fresh runs per point for its expected score (SE ≤ 0.1 req/s even on the SLO's edge)


# One evaluation as the benches count it: the point, its goodput and its score (req/s).
Evaluated = tuple[OperatingPoint, float, float]


class _Counted:
    """Evaluates on the simulator and keeps (point, goodput, score) of every evaluation, in order."""

    def __init__(self, cfg, seed: int):
        self.cfg, self.seed, self.sim = cfg, seed, SimulatorEvaluator(EMBEDDED_LIKE)
        self.log: list[Evaluated] = []
        self.best_figures: dict[tuple, object] = {}  # per point, the figures of its best-scoring evaluation

    def __call__(self, point: OperatingPoint) -> float:
        """One noisy evaluation; returns the score (what every method here maximises)."""
        ev = self.sim.evaluate(point, WORKLOAD, repeats=1, seed=self.seed * 100_003 + len(self.log))
        fig = compute_figures(ev.runs, point, self.cfg, seed=len(self.log))
        self.log.append((point, fig.goodput.value, fig.score.value))
        kept = self.best_figures.get(point.key())
        if kept is None or fig.score.value > kept.score.value:
            self.best_figures[point.key()] = fig
        return fig.score.value

    def confirmed(self) -> tuple[OperatingPoint, int]:
        """The same confirmation the climber runs, on fresh seeds: (chosen point, evaluations it made)."""

        def measure(point, why):
            ev = self.sim.evaluate(
                point, WORKLOAD, repeats=1, seed=self.seed * 100_003 + 50_000 + len(self.log)
            )
            self.log.append((point, 0.0, float("-inf")))  # counted as an evaluation, not as a search result
            return ev.runs, ev.cost_s

        n = len(self.log)
        best = _best_measured(self.log)
        conf = confirm(measure, self.best_figures, best, self.cfg.start, self.cfg, server=None)
        return conf.chosen, len(self.log) - n


@dataclass(frozen=True)
class Truth:
    """A point's ground truth from VALUE_RUNS fresh runs: expected score and P(a run's p99 meets the SLO)."""

    score: float
    p_slo: float
    p99_mean_ms: float  # of a run's p99, over the VALUE_RUNS runs
    p99_sd_ms: float


def _truths(cfgs: list[TunerSpec]) -> list[dict[tuple, Truth]]:
    """Per config, each point's truth over VALUE_RUNS runs on seeds no method uses."""
    sim = SimulatorEvaluator(EMBEDDED_LIKE)
    out: list[dict[tuple, Truth]] = [{} for _ in cfgs]
    for p in cfgs[0].knobs.points():
        runs = [sim.evaluate(p, WORKLOAD, repeats=1, seed=7_000_003 + r).runs[0] for r in range(VALUE_RUNS)]
        for cfg, truth in zip(cfgs, out, strict=True):
            scores, p99s = [], []
            for run in runs:
                values = slo_values_ms(run, cfg.slo_metric)
                goodput = good_mask(values, cfg.slo_p99_ms).sum() / run.duration_s
                p99s.append(float(p99_of(values)))
                scores.append(score_value(goodput, p99_ms=p99s[-1], point=p, cfg=cfg))
            truth[p.key()] = Truth(
                score=float(np.mean(scores)),
                p_slo=float(np.mean(np.array(p99s) <= cfg.slo_p99_ms)),
                p99_mean_ms=float(np.mean(p99s)),
                p99_sd_ms=float(np.std(p99s, ddof=1)),
            )
    return out


def _first_reaching(log: list[Evaluated], target: float) -> int | None:
    return next((i + 1 for i, (_, g, _) in enumerate(log) if g >= target), None)


def _best_measured(log: list[Evaluated]) -> OperatingPoint:
    return max(log, key=lambda e: e[2])[0]


def _grid(cfg, seed) -> _Counted:
    f = _Counted(cfg, seed)
    for p in cfg.knobs.points():
        f(p)
    return f


def _random(cfg, seed, budget) -> _Counted:
    f = _Counted(cfg, seed)
    pts = cfg.knobs.points()
    for i in np.random.default_rng(seed).permutation(len(pts))[:budget]:
        f(pts[i])
    return f


def _tpe(cfg, seed, budget) -> _Counted:
    f = _Counted(cfg, seed)
    space = cfg.knobs

    def objective(trial):
        return f(
            OperatingPoint(
                concurrency=trial.suggest_categorical("concurrency", space.concurrency),
                max_num_seqs=trial.suggest_categorical("max_num_seqs", space.max_num_seqs),
                spec_k=trial.suggest_categorical("spec_k", space.spec_k),
            )
        )

    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=budget)
    return f


class _TargetEvaluator(SimulatorEvaluator):
    """The simulator standing in for the live target (so the trace labels it 'live')."""

    source = "live"


class _Screen(SimulatorEvaluator):
    """The pre-screening simulator, on seeds the target never uses (its noise is its own)."""

    def evaluate(self, point, workload, *, repeats, seed):
        return super().evaluate(point, workload, repeats=repeats, seed=seed + 1_000_003)


def _mis_calibrated() -> SimParams:
    step = EMBEDDED_LIKE.step.model_copy(
        update={"per_seq_s": EMBEDDED_LIKE.step.per_seq_s * 1.3, "base_s": EMBEDDED_LIKE.step.base_s * 0.7}
    )
    return EMBEDDED_LIKE.model_copy(
        update={"step": step, "acceptance_rate": EMBEDDED_LIKE.acceptance_rate * 0.5}
    )


# Climber variants: name and the simulator that pre-screens neighbours and picks restart points.
SCREENS: dict[str, Callable[[], SimParams] | None] = {
    "climb": None,
    "climb+sim": _mis_calibrated,
    "climb+exact sim": lambda: EMBEDDED_LIKE,
}


def _climb(cfg, seed, budget, screen, restarts):
    """(search log, search's best, confirmed pick, evaluations incl. confirmation, restarts used)."""
    c = cfg.model_copy(update={"max_evaluations": budget, "seed": seed, "restarts": restarts})
    sim = _Screen(screen()) if screen else None
    outcome = Climb(_TargetEvaluator(EMBEDDED_LIKE), c, sim, None).run()
    result = build_result(outcome)
    live = [e for e in result.trace if e.source == "live"]
    log = [
        (e.point, e.figures.goodput.value, e.figures.score.value) if e.figures else (e.point, 0.0, -np.inf)
        for e in live
        if e.decision != "confirm"
    ]
    best = outcome.search_best
    restarts_used = sum(e.decision == "restart" for e in result.trace)
    return log, best, result.recommended.point, len(live), restarts_used


class _Tally:
    """Per method and seed: evaluations to the target, both picks' truths, evaluations, restarts."""

    def __init__(self, truth: dict[tuple, Truth], p_required: float):
        self.truth, self.p_required = truth, p_required
        self.best = max(t.score for t in truth.values())  # best expected score (> 0 at the bench's SLOs)
        robust = [(t.score, k) for k, t in truth.items() if t.p_slo >= p_required]
        self.robust_best, self.robust_key = max(robust) if robust else (float("nan"), None)
        self.best_key = max(truth, key=lambda k: truth[k].score)
        self.rows: dict[str, list[tuple[int | None, Truth, Truth, int, int | None]]] = {}

    def add(
        self, name, log, target, best: OperatingPoint, pick: OperatingPoint, evals, restarts=None
    ) -> None:
        row = (_first_reaching(log, target), self.truth[best.key()], self.truth[pick.key()], evals, restarts)
        self.rows.setdefault(name, []).append(row)

    def picks(self, t: Truth) -> bool:
        return t.score >= 0.98 * self.best

    def robust(self, t: Truth) -> bool:
        return t.p_slo >= self.p_required and t.score >= 0.98 * self.robust_best


def main() -> None:
    default = TunerSpec.model_fields["restarts"].default
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--restarts", default=str(default), help="comma-separated restart counts for the climber")
    ap.add_argument(
        "--slos", default=",".join(f"{s:g}" for s in SLOS_MS), help="p99 SLOs (ms), comma-separated"
    )
    ap.add_argument("--seeds", type=int, default=len(SEEDS), help="seeds per SLO (the figures use 10)")
    ap.add_argument(
        "--methods",
        default=None,
        help="comma-separated subset of: grid,random,tpe," + ",".join(SCREENS) + " (without grid, "
        "'reached' is not computed)",
    )
    args = ap.parse_args()
    restarts = [int(r) for r in args.restarts.split(",")]
    methods = set(args.methods.split(",")) if args.methods else {"grid", "random", "tpe", *SCREENS}
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    t0 = time.perf_counter()
    cfgs = [bench_config(float(slo)) for slo in args.slos.split(",")]
    for cfg, truth in zip(cfgs, _truths(cfgs), strict=True):
        _compare_at(cfg, truth, restarts, range(args.seeds), methods)
    print(f"\nwall time {time.perf_counter() - t0:.0f} s; CPU time {time.process_time():.0f} s")


def _compare_at(cfg: TunerSpec, truth: dict[tuple, Truth], restarts, seeds, methods) -> None:
    n_grid = cfg.knobs.size()
    budget = int(0.2 * n_grid)
    tally = _Tally(truth, cfg.slo_probability)
    for seed in seeds:
        # The grid also sets the target of "reached"; without it (a --methods subset) nothing reaches.
        grid = _grid(cfg, seed) if "grid" in methods else None
        target = 0.98 * max(g for _, g, _ in grid.log) if grid else float("inf")
        for name in ("grid", "random", "tpe"):
            if name not in methods:
                continue
            f = grid if name == "grid" else (_random if name == "random" else _tpe)(cfg, seed, budget)
            log = list(f.log)
            best = _best_measured(log)
            pick, _ = f.confirmed()
            tally.add(name, log, target, best, pick, len(f.log))
        for r in restarts:
            for name, screen in SCREENS.items():
                if name in methods:
                    log, best, pick, evals, used = _climb(cfg, seed, budget, screen, r)
                    tally.add(f"{name} r={r}", log, target, best, pick, evals, used)
    _print(cfg.slo_p99_ms, n_grid, budget, tally)


def _print(slo, n_grid, budget, tally: _Tally) -> None:
    t = tally.truth
    print(
        f"\nSLO p99 e2el ≤ {slo:g} ms; grid = {n_grid} evaluations; budget for the others = {budget} (20 %); "
        f"best expected score {tally.best:.3f} req/s at {_label(tally.best_key)} "
        f"(P(SLO) {t[tally.best_key].p_slo:.2f}); robust best (P(SLO) ≥ {tally.p_required:g}) "
        f"{tally.robust_best:.3f} req/s at {_label(tally.robust_key)}"
    )
    top = sorted(t, key=lambda k: -t[k].score)[:6]
    print(
        "top expected scores (req/s; P(SLO); a run's p99 mean ± sd, s): "
        + "; ".join(
            f"{_label(k)} {t[k].score:.3f}, {t[k].p_slo:.2f}, {t[k].p99_mean_ms / 1000:.2f} ± "
            f"{t[k].p99_sd_ms / 1000:.2f}"
            for k in top
        )
    )
    print(
        f"{'method':19s} {'reached':>8s} {'median evals':>13s} {'mean':>6s} {'max':>4s} {'% of grid':>10s}"
        f" {'pick best':>9s} {'pick conf':>9s} {'robust best':>11s} {'robust conf':>11s} {'pick S':>7s}"
        f" {'pick P':>6s} {'evals used':>10s} {'max':>4s} {'restarts':>8s}"
    )
    for name, seeds in tally.rows.items():
        first, best, pick, used, restarts = zip(*seeds, strict=True)
        hit = [v for v in first if v is not None]
        med = statistics.median(hit) if hit else float("nan")
        line = (
            f"{name:19s} {len(hit):>4d}/{len(first):<3d} {med:>13.1f} "
            f"{(statistics.mean(hit) if hit else float('nan')):>6.1f} {max(hit, default=0):>4d} "
            f"{100 * med / n_grid:>9.1f}% {_count(tally.picks, best):>9s} {_count(tally.picks, pick):>9s} "
            f"{_count(tally.robust, best):>11s} {_count(tally.robust, pick):>11s} "
            f"{statistics.median(p.score for p in pick):>7.3f} {statistics.median(p.p_slo for p in pick):>6.2f} "
            f"{statistics.mean(used):>10.1f} {max(used):>4d}"
        )
        if restarts[0] is not None:
            line += f" {statistics.mean(restarts):>8.1f}"
        print(line, flush=True)


def _count(ok: Callable[[Truth], bool], truths) -> str:
    return f"{sum(map(ok, truths))}/{len(truths)}"


def _label(key) -> str:
    """(concurrency, max_num_seqs, spec_k)"""
    return "—" if key is None else f"({key[0]}, {key[1]}, {key[2]})"


if __name__ == "__main__":
    main()
