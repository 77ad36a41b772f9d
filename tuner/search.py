"""What a tuning search (tuner.climb) keeps between its steps: where it stands (`SearchState`), what it may
still spend (`Budget`) and the evidence of every step (`Trace`). Each is named and typed, so the climb passes
them explicitly instead of leaving values for a later step to pick up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tuner.confirm import restarts_needed, schedule
from tuner.estimates import Figures
from tuner.evaluation import Evaluation, RunSample, Source
from tuner.knobs import KNOBS, OperatingPoint, changed_knobs, needs_restart
from tuner.result import Decision, FixedKnob, TraceEntry
from tuner.spec import TunerSpec

Key = tuple[int, int, int]


@dataclass
class SearchState:
    """Where the search stands: what was measured, refused or fixed, and the climb's position in the space."""

    server: OperatingPoint | None  # the server's settings now (a restart knob change restarts it)
    measured: dict[Key, Figures] = field(default_factory=dict)  # first scored evaluation of each point
    runs: dict[Key, list[RunSample]] = field(default_factory=dict)  # the runs behind `measured`
    failed: set[Key] = field(default_factory=set)  # refused or too few samples: never tried again
    fixed: dict[str, FixedKnob] = field(default_factory=dict)
    # Evaluations measured before the climb (calibration): charged when made, used when the climb asks.
    prior: dict[Key, Evaluation] = field(default_factory=dict)
    current: OperatingPoint | None = None
    # Best climb optimum so far; a later climb's optimum must beat it beyond noise to replace it.
    incumbent: OperatingPoint | None = None
    last_move: tuple[str, int] | None = None  # (knob, direction) of the last accepted move
    climbs: int = 0
    restarts_used: int = 0
    # Set for the climb from a confirmation's back-off point: the simulator's screening led the search to
    # points that failed confirmation, so there every neighbour is measured instead.
    below_edge: bool = False

    def keep(self, key: Key, fig: Figures, runs: list[RunSample]) -> None:
        self.measured[key] = fig
        self.runs[key] = list(runs)

    def taken(self) -> set[Key]:
        """Points the search has evaluated or holds an evaluation of."""
        return {*self.measured, *self.failed, *self.prior}

    def move_to(self, cand: OperatingPoint, cfg: TunerSpec) -> None:
        """An accepted move: remember its direction, so the next step tries it first."""
        knob = changed_knobs(self.current, cand)[0]
        values = cfg.knobs.values(knob)
        up = values.index(getattr(cand, knob)) > values.index(getattr(self.current, knob))
        self.last_move = (knob, 1 if up else -1)
        self.current = cand


@dataclass
class Budget:
    """Evaluations and time charged so far, what the next evaluation is estimated to cost, and why the search
    must stop (`spent`: empty while budget remains; once set it ends the climb and every restart)."""

    cfg: TunerSpec
    evals_used: int = 0
    time_used: float = 0.0
    spent: str = ""
    run_s: dict[Key, float] = field(default_factory=dict)  # last run time measured at each point
    restart_s: float = 0.0  # the slowest server restart seen

    def charge(self, point: OperatingPoint, ev: Evaluation, restart: bool) -> None:
        self.evals_used += 1
        self.time_used += ev.cost_s
        self.run_s[point.key()] = ev.run_s
        if restart:
            self.restart_s = max(self.restart_s, ev.restart_s)

    def check_time(self) -> None:
        if self.time_used >= self.cfg.time_budget_s and not self.spent:
            self.spent = f"time budget spent ({self.time_used:.0f} s of {self.cfg.time_budget_s:g} s)"

    def estimated_cost(self, cand: OperatingPoint, state: SearchState) -> float:
        if cand.key() in state.prior:
            return 0.0
        restart = self.restart_s if needs_restart(state.server, cand) else 0.0
        return self.estimated_run(cand, state) + restart

    def estimated_run(self, point: OperatingPoint, state: SearchState) -> float:
        if point.key() in self.run_s:
            return self.run_s[point.key()]
        # Run time grows as concurrency falls (lower throughput), so scale the slowest run seen by it.
        worst = max(self.run_s.values(), default=0.0)
        return worst * max(1.0, (state.current or self.cfg.start).concurrency / point.concurrency)

    def reserve(self, cand: OperatingPoint, state: SearchState) -> tuple[int, float]:
        """Evaluations and time that confirming the default and the best point would need, were `cand`
        (or the current point, or the best so far: the dearest of them) to be the best."""
        runs = self.cfg.confirm_runs
        if runs == 0:
            return 0, 0.0
        start = self.cfg.start
        rivals = {p.key(): p for p in (cand, state.current, state.incumbent) if p is not None and p != start}
        best = max(rivals.values(), key=lambda p: self.estimated_run(p, state), default=None)
        points = [start] if best is None else [best, start]
        order = schedule(points, runs, best or start)
        time = runs * sum(self.estimated_run(p, state) for p in points) + self.restart_s * restarts_needed(
            order, cand
        )
        return runs * len(points), time

    def fits(self, cand: OperatingPoint, state: SearchState, *, reserve: bool = True) -> bool:
        """Whether evaluating `cand` (and, with `reserve`, confirming afterwards) stays within both budgets;
        when not, `spent` says which ran out."""
        keep_evals, keep_s = self.reserve(cand, state) if reserve else (0, 0.0)
        kept = f", {keep_evals} kept for confirmation" if keep_evals else ""
        if self.evals_used + 1 + keep_evals > self.cfg.max_evaluations:
            self.spent = f"evaluation budget spent ({self.evals_used} of {self.cfg.max_evaluations}{kept})"
            return False
        need = self.estimated_cost(cand, state)
        left = self.cfg.time_budget_s - self.time_used
        if need + keep_s > left:
            kept = f"; {keep_s:.0f} s kept for confirmation" if keep_s else ""
            self.spent = (
                f"time budget: next evaluation ({cand.label()}) estimated at {need:.0f} s, {left:.0f} s left"
                f"{kept}"
            )
            return False
        return True


@dataclass(frozen=True)
class Trial:
    """One evaluation of a point as the trace records it, before the climb has judged it."""

    point: OperatingPoint
    source: Source
    fig: Figures | None
    restart: bool
    cost: float


class Trace:
    """Every evaluation and prediction in order, each shown to `progress` as it is recorded."""

    def __init__(self, progress: Callable[[TraceEntry], None] | None):
        self.entries: list[TraceEntry] = []
        self.progress = progress

    def record(
        self,
        point: OperatingPoint,
        source: Source,
        fig: Figures | None,
        decision: Decision,
        reason: str,
        restart: bool = False,
        cost: float = 0.0,
    ) -> None:
        entry = TraceEntry(
            index=len(self.entries), point=point, source=source, figures=fig, restart=restart,
            cost_s=cost, decision=decision, reason=reason,
        )  # fmt: skip
        self.entries.append(entry)
        if self.progress is not None:
            self.progress(entry)

    def record_trial(self, trial: Trial, decision: Decision, reason: str) -> None:
        self.record(trial.point, trial.source, trial.fig, decision, reason, trial.restart, trial.cost)


def index_of(key: Key, cfg: TunerSpec) -> tuple[int, ...]:
    """A point's position in the knob space: the index of each knob's value in its value list."""
    return tuple(cfg.knobs.values(k).index(v) for k, v in zip(KNOBS, key, strict=True))
