"""Noise-aware hill climbing over logical knobs, optionally pre-screened by the simulator."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from tuner.config import TunerConfig
from tuner.confirm import BACKOFF_BEST, Confirmation, confirm, restarts_needed, schedule
from tuner.evaluation import Evaluation, Evaluator, RunSample, Source, evaluation_seed
from tuner.figures import Figures, compute_figures
from tuner.knobs import KNOBS, OperatingPoint, changed_knobs, needs_restart
from tuner.result import Decision, FixedKnob, TraceEntry

Key = tuple[int, int, int]

ACCEPTANCE_RULE = (
    "move to a neighbour (one knob one step along its value list) only if its measured score exceeds the "
    "current point's by more than max(min_gain, z·sqrt(SE_new² + SE_current²)); first such neighbour wins; "
    "a climb ends when no unmeasured neighbour passes; while restarts and budget remain, a new climb starts "
    "from the unmeasured point with the best predicted score (with a simulator) or the one farthest from "
    "every evaluated point (without); a climb's optimum replaces the best so far only if it beats it by the "
    "same rule; stop when restarts are used up or the next evaluation would exceed a budget, keeping what "
    "confirming the best point and the default needs (see the confirmation rule)"
)


@dataclass(frozen=True)
class ClimbOutcome:
    """What a finished search hands to the report: read-only, so the report cannot disturb the search."""

    config: TunerConfig
    source: Source  # the evaluator's: "live" or "simulator"
    trace: tuple[TraceEntry, ...]
    measured: Mapping[Key, Figures]  # first scored evaluation of each point
    runs: Mapping[Key, tuple[RunSample, ...]]  # the runs behind `measured`
    # Simulator predictions at the measured points; None when no simulator screened the search.
    predicted: Mapping[Key, Figures | None] | None
    search_best: OperatingPoint | None  # the search's best as measured; None when the default was not scored
    confirmation: Confirmation | None  # None when confirm_runs = 0 or nothing was scored
    recommended: OperatingPoint | None  # the confirmation's choice, else the search's best
    fixed_knobs: tuple[FixedKnob, ...]
    evaluations_used: int
    time_used_s: float
    stop_reason: str


class Climb:
    """State of a tuning search: one climb from the default, then restarts. `run()` returns its outcome."""

    def __init__(
        self,
        evaluator: Evaluator,
        cfg: TunerConfig,
        simulator: Evaluator | None,
        progress: Callable[[TraceEntry], None] | None,
        *,
        prior: list[Evaluation] = (),
        server: OperatingPoint | None = None,
        fixed: list[FixedKnob] = (),
    ):
        self.ev, self.cfg, self.sim, self.progress = evaluator, cfg, simulator, progress
        self.trace: list[TraceEntry] = []
        self.measured: dict[Key, Figures] = {}
        self.runs: dict[Key, list[RunSample]] = {}
        self.confirmation: Confirmation | None = None
        # Set for the climb from a confirmation's back-off point: the simulator's screening led the search
        # to points that failed confirmation, so there every neighbour is measured instead.
        self._below_edge = False
        self.predicted: dict[Key, Figures] = {}
        self.fixed: dict[str, FixedKnob] = {f.knob: f for f in fixed}
        self.failed: set[Key] = set()
        self.evals_used = 0
        self.time_used = 0.0
        self.current: OperatingPoint | None = None
        # Best climb optimum so far; a later climb's optimum must beat it beyond noise to replace it.
        self.incumbent: OperatingPoint | None = None
        self.last_move: tuple[str, int] | None = None
        self.climbs = 0
        self.restarts_used = 0
        self.stop_reason = ""
        self._halt = ""  # set when a budget is spent: ends the climb and every restart
        self._no_restart = ""
        self._run_s: dict[Key, float] = {}
        self._restart_s = 0.0
        self._pending: dict = {}
        self.server = server
        # Evaluations measured before the climb (calibration): charged now, used when the climb asks.
        self.prior: dict[Key, Evaluation] = {}
        for ev in prior:
            self._absorb(ev)

    # -- the climb --------------------------------------------------------------------------------

    def run(self) -> ClimbOutcome:
        try:
            self._climb()
        finally:
            self._score_unused_prior()
        self._search_best = self.incumbent
        if self.incumbent is not None and self.cfg.confirm_runs > 0:
            self._confirm()
        return self._outcome_of_run()

    def _outcome_of_run(self) -> ClimbOutcome:
        predicted = None
        if self.sim is not None:
            predicted = MappingProxyType({k: self._predict(_point(k)) for k in self.measured})
        return ClimbOutcome(
            config=self.cfg,
            source=self.ev.source,
            trace=tuple(self.trace),
            measured=MappingProxyType(dict(self.measured)),
            runs=MappingProxyType({k: tuple(v) for k, v in self.runs.items()}),
            predicted=predicted,
            search_best=self._search_best,
            confirmation=self.confirmation,
            recommended=self.confirmation.chosen if self.confirmation else self.incumbent,
            fixed_knobs=tuple(self.fixed.values()),
            evaluations_used=self.evals_used,
            time_used_s=self.time_used,
            stop_reason=self.stop_reason,
        )

    def _climb(self) -> None:
        start = self.cfg.start
        if self._measure(start, "start", "default operating point") is None:
            self.stop_reason = "the default point could not be evaluated (see the trace)"
            return
        self.current = self.incumbent = start
        while True:
            ended = self._ascend()
            self._keep_best()
            if self._halt or not self._restart():
                break
        self.stop_reason = self._summary(ended)

    def _ascend(self) -> str:
        """One climb from `current` to a local optimum; returns why it ended."""
        self.climbs += 1
        while not self._halt:
            candidates = self._candidates()
            if not candidates:
                return "every neighbour of the current point was already evaluated or excluded"
            if self.sim is not None and not self._below_edge:
                candidates = self._screen(candidates)
            if not self._try(candidates) and not self._halt:
                return (
                    f"local optimum: no neighbour of {self.current.label()} improved the score beyond noise"
                )
        return self._halt

    def _summary(self, ended: str) -> str:
        if self._halt and self._halt != ended:
            ended += f"; then {self._halt}"  # spent before the next restart could start
        if self._no_restart:
            ended += f"; {self._no_restart}"
        n, used = self.climbs, self.restarts_used
        if n == 1:
            return f"{ended}; 1 climb ran ({used} of {self.cfg.restarts} restarts used)"
        # The last climb's end is not the recommendation: that is the best over all climbs.
        return f"{n} climbs ran ({used} of {self.cfg.restarts} restarts used); the last ended: {ended}"

    def _try(self, candidates: list[OperatingPoint]) -> bool:
        """Measure candidates in order; move to the first that passes the acceptance rule."""
        for cand in candidates:
            if not self._fits_budget(cand):
                return False
            fig = self._measure(cand)
            if fig is not None and self._judge(cand, fig):
                return True
        return False

    def _candidates(self) -> list[OperatingPoint]:
        cur = self.current
        out: list[tuple[int, OperatingPoint]] = []
        for knob, info in KNOBS.items():
            if knob in self.fixed:
                continue
            values = self.cfg.knobs.values(knob)
            i = values.index(getattr(cur, knob))
            for d in (+1, -1):
                if not 0 <= i + d < len(values):
                    continue
                cand = cur.with_knob(knob, values[i + d])
                if cand.key() in self.measured or cand.key() in self.failed:
                    continue
                # Continue the last accepted direction first, then online knobs, then restart knobs.
                rank = 0 if self.last_move == (knob, d) else (1 if not info.restart else 2)
                out.append((rank, cand))
        return [c for _, c in sorted(out, key=lambda rc: rc[0])]

    def _screen(self, candidates: list[OperatingPoint]) -> list[OperatingPoint]:
        """Order by predicted score; measure those predicted to gain (at most screen_top), else the best one."""
        base = self._predict(self.current)
        scored = sorted(((self._predict(c), c) for c in candidates), key=lambda fc: -_score(fc[0]))
        # Already measured (calibration) costs nothing more: always judged, first.
        free = [c for _, c in scored if c.key() in self.prior]
        keep = (
            free + [c for f, c in scored if _score(f) > _score(base) and c not in free][: self.cfg.screen_top]
        )
        if not keep:
            keep = [scored[0][1]]
        for f, c in scored:
            if c not in keep:
                self._record(
                    c,
                    "simulator",
                    f,
                    "screened_out",
                    f"predicted score {_fmt(_score(f))} vs {_fmt(_score(base))} predicted at the current "
                    f"point; not among the {self.cfg.screen_top} most promising",
                )
        return keep

    # -- restarts ---------------------------------------------------------------------------------

    def _keep_best(self) -> None:
        """The first climb's optimum is reached by accepted moves from the default; later ones must beat it."""
        if self.climbs == 1:
            self.incumbent = self.current
        elif self._beats(self.current, self.incumbent)[0]:
            self.incumbent = self.current

    def _restart(self) -> bool:
        """Start the next climb at a new point; False when no point is left or the budget is spent."""
        while self.restarts_used < self.cfg.restarts and not self._halt:
            point, why = self._restart_point()
            if point is None:
                self._no_restart = "no unevaluated point left to restart from"
                return False
            if not self._fits_budget(point):
                return False
            self.restarts_used += 1
            reason = (
                f"restart {self.restarts_used} of {self.cfg.restarts} (climb {self.climbs + 1}): {why}; "
                f"best so far {self.incumbent.label()}"
            )
            if self._measure(point, "restart", reason) is not None:
                self.current, self.last_move = point, None
                return True
        return False

    def _restart_point(self) -> tuple[OperatingPoint | None, str]:
        taken = {*self.measured, *self.failed, *self.prior}
        evaluated = [self._index(k) for k in taken]
        held = {k: f.value for k, f in self.fixed.items()}
        free = [p for p in self.cfg.knobs.points(held) if p.key() not in taken]
        if not free:
            return None, ""
        far = {p.key(): min(_steps(self._index(p.key()), e) for e in evaluated) for p in free}
        if self.sim is not None:
            # Ties (e.g. every prediction unscored) go to the point farthest from what was evaluated.
            best = max(free, key=lambda p: (_score(self._predict(p)), far[p.key()]))
            pred = _score(self._predict(best))
            return best, f"best predicted score ({_fmt(pred)} req/s) of the {len(free)} unevaluated points"
        # Farthest first spreads climbs over the space; the seeded draw breaks ties reproducibly.
        tie = np.random.default_rng((self.cfg.seed, self.restarts_used)).random(len(free))
        i = max(range(len(free)), key=lambda j: (far[free[j].key()], tie[j]))
        return free[i], (
            f"farthest unevaluated point ({far[free[i].key()]} value-list steps from the nearest evaluated one)"
        )

    def _index(self, key: Key) -> tuple[int, ...]:
        return tuple(self.cfg.knobs.values(k).index(v) for k, v in zip(KNOBS, key, strict=True))

    # -- measuring and judging --------------------------------------------------------------------

    def _measure(
        self, point: OperatingPoint, decision: Decision | None = None, why: str = ""
    ) -> Figures | None:
        """Evaluate `point`; a scored candidate is recorded by `_judge`, a climb's start (`decision`) here."""
        ev = self.prior.pop(point.key(), None)
        if ev is not None:
            seed = evaluation_seed(self.cfg.seed, self.evals_used)
            restart = ev.restart_s > 0  # charged when it was measured
        else:
            ev, restart, seed = self._evaluate(point)
        outcome, reason, fig = self._outcome(ev, seed)
        self._pending = dict(point=point, source=ev.source, fig=fig, restart=restart, cost=ev.cost_s)
        if decision is not None and fig is not None:
            self._record(decision=decision, reason=why, **self._pending)
        elif fig is None:
            context = f" ({outcome} point: {why})" if decision is not None else ""
            self._record(decision=outcome, reason=reason + context, **self._pending)
        if self.time_used >= self.cfg.time_budget_s and not self._halt:
            self._halt = f"time budget spent ({self.time_used:.0f} s of {self.cfg.time_budget_s:g} s)"
        return fig

    def _evaluate(self, point: OperatingPoint) -> tuple[Evaluation, bool, int]:
        """One evaluation of `point`, charged to the budget: (evaluation, whether it restarted, seed)."""
        seed = evaluation_seed(self.cfg.seed, self.evals_used)
        restart = needs_restart(self.server, point)
        ev = self.ev.evaluate(point, self.cfg.workload, repeats=self.cfg.repeats, seed=seed)
        self.evals_used += 1
        self.time_used += ev.cost_s
        if ev.unsupported is None:
            self.server = point
        self._note_costs(point, ev, restart)
        return ev, restart, seed

    def _outcome(self, ev: Evaluation, seed: int) -> tuple[Decision, str, Figures | None]:
        if ev.unsupported is not None:
            u = ev.unsupported
            keep = getattr(self.current or self.cfg.start, u.knob)
            self.fixed[u.knob] = FixedKnob(knob=u.knob, value=keep, reason=f"{u.knob}={u.value}: {u.reason}")
            self.failed.add(ev.point.key())
            return (
                "unsupported",
                f"target cannot honour {u.knob}={u.value} ({u.reason}); fixed at {keep}",
                None,
            )
        fig = compute_figures(ev.runs, ev.point, self.cfg, seed=seed)
        if fig is None:
            self.failed.add(ev.point.key())
            n = sum(len(r.e2el_ms) for r in ev.runs)
            return "too_few_samples", f"{n} completed requests < min_samples {self.cfg.min_samples}", None
        self.measured[ev.point.key()] = fig
        self.runs[ev.point.key()] = list(ev.runs)
        return "accepted", "", fig  # provisional: `_judge` decides against the current point

    def _beats(self, new: OperatingPoint, old: OperatingPoint) -> tuple[bool, float, float]:
        """The acceptance rule: (passes, score gain, threshold) of `new` over `old`, both measured."""
        a, b = self.measured[old.key()].score, self.measured[new.key()].score
        gain = b.value - a.value
        threshold = max(self.cfg.noise_z * (a.se**2 + b.se**2) ** 0.5, self.cfg.min_gain_rps)
        return gain > threshold, gain, threshold

    def _judge(self, cand: OperatingPoint, fig: Figures) -> bool:
        accepted, gain, threshold = self._beats(cand, self.current)
        if accepted:
            knob = changed_knobs(self.current, cand)[0]
            values = self.cfg.knobs.values(knob)
            up = values.index(getattr(cand, knob)) > values.index(getattr(self.current, knob))
            self.last_move = (knob, 1 if up else -1)
            self.current = cand
            reason = f"score gain {_fmt(gain)} req/s > threshold {_fmt(threshold)} req/s"
        else:
            reason = f"score change {_fmt(gain)} req/s ≤ threshold {_fmt(threshold)} req/s (noise or worse)"
        self._record(decision="accepted" if accepted else "rejected", reason=reason, **self._pending)
        return accepted

    # -- evaluations measured before the climb -----------------------------------------------------

    def _absorb(self, ev: Evaluation) -> None:
        self.evals_used += 1
        self.time_used += ev.cost_s
        self._note_costs(ev.point, ev, ev.restart_s > 0)
        if ev.unsupported is None:
            self.prior[ev.point.key()] = ev
            return
        decision, reason, _ = self._outcome(ev, self.cfg.seed)
        self._record(ev.point, ev.source, None, decision, reason, restart=True, cost=ev.cost_s)

    def _score_unused_prior(self) -> None:
        """Calibration points the climb never asked for still count as measured (effects, fidelity)."""
        for key, ev in list(self.prior.items()):
            fig = compute_figures(ev.runs, ev.point, self.cfg, seed=self.cfg.seed)
            if fig is not None:
                self.measured[key] = fig
                self.runs[key] = list(ev.runs)
        self.prior.clear()

    # -- confirmation -----------------------------------------------------------------------------

    def _confirm(self) -> None:
        """Fresh, interleaved runs of the best point, the default and its rivals; see tuner.confirm.

        If no confirmed point met the required P(SLO) and the confirmation backed off to a lower
        concurrency that does, the search never explored that region (it climbed past it on lucky runs):
        one more climb starts there, with the points that failed confirmation excluded, and its optimum
        is confirmed again together with the back-off point."""
        first: Confirmation | None = None
        for attempt in (1, 2):
            self._halt = ""  # the search's budget stop does not stop the confirmation its reserve paid for
            left = self.cfg.max_evaluations - self.evals_used
            self._fresh: dict[Key, list[RunSample]] = {}
            done = frozenset(p.point.key() for p in first.points) if first else frozenset()
            conf = confirm(
                self._replicate,
                self.measured,
                self.incumbent,
                self.cfg.start,
                self.cfg,
                server=self.server,
                max_points=max(1, left // self.cfg.confirm_runs),
                exclude=done,
                # after a back-off the search's best (the first incumbent) stays the one "incumbent"
                incumbent_role="incumbent" if first is None else BACKOFF_BEST,
            )
            if first is not None and conf.evaluations == 0:
                self.confirmation = first  # nothing left to confirm the new climb with: the back-off stands
                self.stop_reason += "; no budget was left to confirm that climb's optimum"
                return
            self.confirmation = conf if first is None else _merge(conf, first)
            chosen = next(p for p in conf.points if p.point == conf.chosen)
            if attempt == 2 or "back-off" not in chosen.roles or not chosen.eligible:
                return
            first = conf
            self._climb_below_the_edge(chosen)

    def _climb_below_the_edge(self, start) -> None:
        for p in self.confirmation.points:
            if not p.eligible:
                self.failed.add(p.point.key())
        key = start.point.key()
        self.measured[key], self.runs[key] = start.figures, self._fresh[key]
        self.incumbent = self.current = start.point
        self.last_move = None
        self._below_edge = True
        ended = self._ascend()
        self._keep_best()
        self.stop_reason += (
            f"; confirmation backed off to {start.point.label()}, and a climb from there ended: {ended}"
        )

    def _replicate(self, point: OperatingPoint, why: str) -> tuple[list[RunSample], float] | None:
        if not self._fits_budget(point, reserve=False):
            return None
        ev, restart, seed = self._evaluate(point)
        fig = compute_figures(ev.runs, point, self.cfg, seed=seed) if ev.unsupported is None else None
        note = "" if fig is not None else " (no figures: too few completed requests or refused)"
        self._record(point, ev.source, fig, "confirm", why + note, restart=restart, cost=ev.cost_s)
        self._fresh.setdefault(point.key(), []).extend(ev.runs if ev.unsupported is None else [])
        return (list(ev.runs) if ev.unsupported is None else [], ev.cost_s)

    # -- budget -----------------------------------------------------------------------------------

    def _note_costs(self, point: OperatingPoint, ev: Evaluation, restart: bool) -> None:
        self._run_s[point.key()] = ev.run_s
        if restart:
            self._restart_s = max(self._restart_s, ev.restart_s)

    def _estimated_cost(self, cand: OperatingPoint) -> float:
        if cand.key() in self.prior:
            return 0.0
        restart = self._restart_s if needs_restart(self.server, cand) else 0.0
        return self._estimated_run(cand) + restart

    def _estimated_run(self, point: OperatingPoint) -> float:
        if point.key() in self._run_s:
            return self._run_s[point.key()]
        # Run time grows as concurrency falls (lower throughput), so scale the slowest run seen by it.
        worst = max(self._run_s.values(), default=0.0)
        return worst * max(1.0, (self.current or self.cfg.start).concurrency / point.concurrency)

    def _reserve(self, cand: OperatingPoint) -> tuple[int, float]:
        """Evaluations and time that confirming the default and the best point would need, were `cand`
        (or the current point, or the best so far: the dearest of them) to be the best."""
        runs = self.cfg.confirm_runs
        if runs == 0:
            return 0, 0.0
        start = self.cfg.start
        rivals = {p.key(): p for p in (cand, self.current, self.incumbent) if p is not None and p != start}
        best = max(rivals.values(), key=self._estimated_run, default=None)
        points = [start] if best is None else [best, start]
        order = schedule(points, runs, best or start)
        time = runs * sum(self._estimated_run(p) for p in points) + self._restart_s * restarts_needed(
            order, cand
        )
        return runs * len(points), time

    def _fits_budget(self, cand: OperatingPoint, *, reserve: bool = True) -> bool:
        keep_evals, keep_s = self._reserve(cand) if reserve else (0, 0.0)
        kept = f", {keep_evals} kept for confirmation" if keep_evals else ""
        if self.evals_used + 1 + keep_evals > self.cfg.max_evaluations:
            self._halt = f"evaluation budget spent ({self.evals_used} of {self.cfg.max_evaluations}{kept})"
            return False
        need = self._estimated_cost(cand)
        left = self.cfg.time_budget_s - self.time_used
        if need + keep_s > left:
            kept = f"; {keep_s:.0f} s kept for confirmation" if keep_s else ""
            self._halt = f"time budget: next evaluation ({cand.label()}) estimated at {need:.0f} s, {left:.0f} s left{kept}"
            return False
        return True

    # -- trace ------------------------------------------------------------------------------------

    def _predict(self, point: OperatingPoint) -> Figures | None:
        key = point.key()
        if key not in self.predicted:
            ev = self.sim.evaluate(point, self.cfg.workload, repeats=self.cfg.repeats, seed=self.cfg.seed)
            fig = compute_figures(ev.runs, point, self.cfg, seed=self.cfg.seed)
            self.predicted[key] = fig
        return self.predicted[key]

    def _record(self, point, source, fig, decision, reason, restart=False, cost=0.0) -> None:
        entry = TraceEntry(
            index=len(self.trace), point=point, source=source, figures=fig, restart=restart,
            cost_s=cost, decision=decision, reason=reason,
        )  # fmt: skip
        self.trace.append(entry)
        if self.progress is not None:
            self.progress(entry)


def _merge(second: Confirmation, first: Confirmation) -> Confirmation:
    """The confirmation after a climb below the SLO's edge, keeping the first one's points and costs. A point
    confirmed in both (the back-off point, when the climb from it ended there) keeps its second, fresher
    judgement and the roles of both, each once."""
    earlier = {p.point.key(): p.roles for p in first.points}

    def roles(p) -> list[str]:
        before = earlier.get(p.point.key(), [])
        return before + [r for r in p.roles if r not in before]

    again = {p.point.key() for p in second.points}
    return second.model_copy(
        update={
            "points": [p.model_copy(update={"roles": roles(p)}) for p in second.points]
            + [p for p in first.points if p.point.key() not in again],
            "evaluations": first.evaluations + second.evaluations,
            "time_s": first.time_s + second.time_s,
            "reason": f"{second.reason}; after the first confirmation ({first.reason}) backed off and a "
            "climb started from the back-off point",
        }
    )


def _point(key: Key) -> OperatingPoint:
    return OperatingPoint(**dict(zip(KNOBS, key, strict=True)))


def _score(fig: Figures | None) -> float:
    return float("-inf") if fig is None else fig.score.value


def _steps(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Distance in one-knob, one-value moves (the climb's own step)."""
    return sum(abs(i - j) for i, j in zip(a, b, strict=True))


def _fmt(x: float) -> str:
    return f"{x:+.3f}" if abs(x) < 100 else f"{x:+.1f}"
