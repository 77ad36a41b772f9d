"""Grid, random search, Optuna TPE and the hill climber on the simulator, at equal budgets.

Figure of merit: evaluations needed until one evaluation reaches ≥ 98 % of the best goodput the full
grid finds (vLLM auto_tune style: every combination once). Goal: ≤ 20 % of the grid's evaluations.
Each evaluation is a noisy simulated run (step jitter, per-evaluation seed) of the bench workload.
The climber also runs with a deliberately mis-calibrated simulator (step costs ×1.3/×0.7,
acceptance ×0.5) as pre-screen, counting only the evaluations made on the "target".
"""

from __future__ import annotations

import itertools
import statistics

import numpy as np
import optuna
from tuner_common import EMBEDDED_LIKE, WORKLOAD, bench_config

from tuner import KnobSpace, OperatingPoint, SimulatorEvaluator, tune
from tuner.figures import compute_figures

SEEDS = range(10)
SLOS_MS = (5000.0, 7000.0, 10000.0)


def _points(space: KnobSpace) -> list[OperatingPoint]:
    return [
        OperatingPoint(concurrency=c, max_num_seqs=m, spec_k=k)
        for c, m, k in itertools.product(space.concurrency, space.max_num_seqs, space.spec_k)
    ]


class _Counted:
    """Evaluates on the simulator and keeps (point, goodput, score) of every evaluation, in order."""

    def __init__(self, cfg, seed: int):
        self.cfg, self.seed, self.sim = cfg, seed, SimulatorEvaluator(EMBEDDED_LIKE)
        self.log: list[tuple[OperatingPoint, float, float]] = []

    def __call__(self, point: OperatingPoint) -> float:
        ev = self.sim.evaluate(point, WORKLOAD, repeats=1, seed=self.seed * 100_003 + len(self.log))
        fig = compute_figures(ev.runs, point, self.cfg, seed=len(self.log))
        self.log.append((point, fig.goodput.value, fig.score.value))
        return fig.score.value


def _first_reaching(goodputs: list[float], target: float) -> int | None:
    return next((i + 1 for i, g in enumerate(goodputs) if g >= target), None)


def _grid(cfg, seed) -> list[float]:
    f = _Counted(cfg, seed)
    for p in _points(cfg.knobs):
        f(p)
    return [g for _, g, _ in f.log]


def _random(cfg, seed, budget) -> list[float]:
    f = _Counted(cfg, seed)
    pts = _points(cfg.knobs)
    for i in np.random.default_rng(seed).permutation(len(pts))[:budget]:
        f(pts[i])
    return [g for _, g, _ in f.log]


def _tpe(cfg, seed, budget) -> list[float]:
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
    return [g for _, g, _ in f.log]


class _TargetEvaluator(SimulatorEvaluator):
    """The simulator standing in for the live target (so the trace labels it 'live')."""

    source = "live"


def _climb(cfg, seed, budget, screened: bool) -> tuple[list[float], float]:
    c = cfg.model_copy(update={"max_evaluations": budget, "seed": seed})
    screen = None
    if screened:
        step = EMBEDDED_LIKE.step.model_copy(
            update={
                "per_seq_s": EMBEDDED_LIKE.step.per_seq_s * 1.3,
                "base_s": EMBEDDED_LIKE.step.base_s * 0.7,
            }
        )
        wrong = EMBEDDED_LIKE.model_copy(
            update={"step": step, "acceptance_rate": EMBEDDED_LIKE.acceptance_rate * 0.5}
        )
        screen = SimulatorEvaluator(wrong)
    result = tune(_TargetEvaluator(EMBEDDED_LIKE), c, simulator=screen)
    live = [e for e in result.trace if e.source == "live"]
    final = result.recommended.figures.goodput.value
    return [e.figures.goodput.value if e.figures else 0.0 for e in live], final


def main() -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    for slo in SLOS_MS:
        cfg = bench_config(slo)
        n_grid = cfg.knobs.size()
        budget = int(0.2 * n_grid)
        rows: dict[str, list[int | None]] = {k: [] for k in ("grid", "random", "tpe", "climb", "climb+sim")}
        used: dict[str, list[int]] = {"climb": [], "climb+sim": []}
        for seed in SEEDS:
            grid = _grid(cfg, seed)
            target = 0.98 * max(grid)
            rows["grid"].append(_first_reaching(grid, target))
            rows["random"].append(_first_reaching(_random(cfg, seed, budget), target))
            rows["tpe"].append(_first_reaching(_tpe(cfg, seed, budget), target))
            for name, screened in (("climb", False), ("climb+sim", True)):
                seq, _ = _climb(cfg, seed, budget, screened)
                rows[name].append(_first_reaching(seq, target))
                used[name].append(len(seq))
        _print(slo, n_grid, budget, rows, used)


def _print(slo, n_grid, budget, rows, used) -> None:
    print(
        f"\nSLO p99 e2el ≤ {slo:g} ms; grid = {n_grid} evaluations; budget for the others = {budget} (20 %)"
    )
    print(f"{'method':10s} {'reached':>8s} {'median evals':>13s} {'mean':>7s} {'max':>5s} {'% of grid':>10s}")
    for name, vals in rows.items():
        hit = [v for v in vals if v is not None]
        med = statistics.median(hit) if hit else float("nan")
        line = (
            f"{name:10s} {len(hit):>4d}/{len(vals):<3d} {med:>13.1f} "
            f"{(statistics.mean(hit) if hit else float('nan')):>7.1f} {max(hit, default=0):>5d} "
            f"{100 * med / n_grid:>9.1f}%"
        )
        if name in used:
            line += f"   (climb stopped after {statistics.mean(used[name]):.1f} evaluations on average)"
        print(line)


if __name__ == "__main__":
    main()
