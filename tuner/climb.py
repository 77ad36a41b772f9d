"""Noise-aware hill climbing over logical knobs, optionally pre-screened by the simulator."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

import numpy as np

from tuner.confirm import BACKOFF_BEST, Confirmation, confirm
from tuner.estimates import Figures, compute_figures
from tuner.evaluation import Evaluation, Evaluator, RunSample, Source, evaluation_seed
from tuner.knobs import KNOBS, OperatingPoint, needs_restart
from tuner.result import Decision, FixedKnob, TraceEntry
from tuner.search import Budget, Key, SearchState, Trace, Trial, index_of
from tuner.spec import TunerSpec

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
    """What a finished search hands to its findings (tuner.findings): read-only, so they cannot disturb the search."""

    config: TunerSpec
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
    """A tuning search: one climb from the default, then restarts, then the confirmation. It keeps its
    position in `state`, its spending in `budget` and its evidence in `trace`; `run()` returns its outcome."""

    def __init__(
        self,
        evaluator: Evaluator,
        cfg: TunerSpec,
        simulator: Evaluator | None,
        progress: Callable[[TraceEntry], None] | None,
        *,
        prior: list[Evaluation] = (),
        server: OperatingPoint | None = None,
        fixed: list[FixedKnob] = (),
    ):
        self.ev, self.cfg, self.sim = evaluator, cfg, simulator
        self.state = SearchState(server=server, fixed={f.knob: f for f in fixed})
        self.budget = Budget(cfg)
        self.trace = Trace(progress)
        self.predicted: dict[Key, Figures | None] = {}  # the simulator's, cached: it is deterministic
        self.confirmation: Confirmation | None = None
        self.stop_reason = ""
        self.no_restart = ""  # why no restart could start, when none was left
        for ev in prior:
            self._absorb(ev)

    # -- the climb --------------------------------------------------------------------------------

    def run(self) -> ClimbOutcome:
        try:
            self._climb()
        finally:
            self._score_unused_prior()
        search_best = self.state.incumbent
        if search_best is not None and self.cfg.confirm_runs > 0:
            self._confirm()
        return self._outcome_of_run(search_best)

    def _outcome_of_run(self, search_best: OperatingPoint | None) -> ClimbOutcome:
        state = self.state
        predicted = None
        if self.sim is not None:
            predicted = MappingProxyType({k: self._predict(_point(k)) for k in state.measured})
        return ClimbOutcome(
            config=self.cfg,
            source=self.ev.source,
            trace=tuple(self.trace.entries),
            measured=MappingProxyType(dict(state.measured)),
            runs=MappingProxyType({k: tuple(v) for k, v in state.runs.items()}),
            predicted=predicted,
            search_best=search_best,
            confirmation=self.confirmation,
            recommended=self.confirmation.chosen if self.confirmation else state.incumbent,
            fixed_knobs=tuple(state.fixed.values()),
            evaluations_used=self.budget.evals_used,
            time_used_s=self.budget.time_used,
            stop_reason=self.stop_reason,
        )

    def _climb(self) -> None:
        start = self.cfg.start
        if self._measure(start, "start", "default operating point") is None:
            self.stop_reason = "the default point could not be evaluated (see the trace)"
            return
        self.state.current = self.state.incumbent = start
        while True:
            ended = self._ascend()
            self._keep_best()
            if self.budget.spent or not self._restart():
                break
        self.stop_reason = self._summary(ended)

    def _ascend(self) -> str:
        """One climb from `current` to a local optimum; returns why it ended."""
        self.state.climbs += 1
        while not self.budget.spent:
            candidates = self._candidates()
            if not candidates:
                return "every neighbour of the current point was already evaluated or excluded"
            if self.sim is not None and not self.state.below_edge:
                candidates = self._screen(candidates)
            if not self._try(candidates) and not self.budget.spent:
                return (
                    f"local optimum: no neighbour of {self.state.current.label()} improved the score beyond "
                    "noise"
                )
        return self.budget.spent

    def _summary(self, ended: str) -> str:
        spent = self.budget.spent
        if spent and spent != ended:
            ended += f"; then {spent}"  # spent before the next restart could start
        if self.no_restart:
            ended += f"; {self.no_restart}"
        n, used = self.state.climbs, self.state.restarts_used
        if n == 1:
            return f"{ended}; 1 climb ran ({used} of {self.cfg.restarts} restarts used)"
        # The last climb's end is not the recommendation: that is the best over all climbs.
        return f"{n} climbs ran ({used} of {self.cfg.restarts} restarts used); the last ended: {ended}"

    def _try(self, candidates: list[OperatingPoint]) -> bool:
        """Measure candidates in order; move to the first that passes the acceptance rule."""
        for cand in candidates:
            if not self.budget.fits(cand, self.state):
                return False
            trial = self._measure(cand)
            if trial is not None and self._judge(trial):
                return True
        return False

    def _candidates(self) -> list[OperatingPoint]:
        state = self.state
        cur = state.current
        out: list[tuple[int, OperatingPoint]] = []
        for knob, info in KNOBS.items():
            if knob in state.fixed:
                continue
            values = self.cfg.knobs.values(knob)
            i = values.index(getattr(cur, knob))
            for d in (+1, -1):
                if not 0 <= i + d < len(values):
                    continue
                cand = cur.with_knob(knob, values[i + d])
                if cand.key() in state.measured or cand.key() in state.failed:
                    continue
                # Continue the last accepted direction first, then online knobs, then restart knobs.
                rank = 0 if state.last_move == (knob, d) else (1 if not info.restart else 2)
                out.append((rank, cand))
        return [c for _, c in sorted(out, key=lambda rc: rc[0])]

    def _screen(self, candidates: list[OperatingPoint]) -> list[OperatingPoint]:
        """Order by predicted score; measure those predicted to gain (at most screen_top), else the best one."""
        base = self._predict(self.state.current)
        scored = sorted(((self._predict(c), c) for c in candidates), key=lambda fc: -_score(fc[0]))
        # Already measured (calibration) costs nothing more: always judged, first.
        free = [c for _, c in scored if c.key() in self.state.prior]
        keep = (
            free + [c for f, c in scored if _score(f) > _score(base) and c not in free][: self.cfg.screen_top]
        )
        if not keep:
            keep = [scored[0][1]]
        for f, c in scored:
            if c not in keep:
                self.trace.record(
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
        state = self.state
        if state.climbs == 1:
            state.incumbent = state.current
        elif self._beats(state.current, state.incumbent)[0]:
            state.incumbent = state.current

    def _restart(self) -> bool:
        """Start the next climb at a new point; False when no point is left or the budget is spent."""
        state = self.state
        while state.restarts_used < self.cfg.restarts and not self.budget.spent:
            point, why = self._restart_point()
            if point is None:
                self.no_restart = "no unevaluated point left to restart from"
                return False
            if not self.budget.fits(point, state):
                return False
            state.restarts_used += 1
            reason = (
                f"restart {state.restarts_used} of {self.cfg.restarts} (climb {state.climbs + 1}): {why}; "
                f"best so far {state.incumbent.label()}"
            )
            if self._measure(point, "restart", reason) is not None:
                state.current, state.last_move = point, None
                return True
        return False

    def _restart_point(self) -> tuple[OperatingPoint | None, str]:
        taken = self.state.taken()
        evaluated = [index_of(k, self.cfg) for k in taken]
        held = {k: f.value for k, f in self.state.fixed.items()}
        free = [p for p in self.cfg.knobs.points(held) if p.key() not in taken]
        if not free:
            return None, ""
        far = {p.key(): min(_steps(index_of(p.key(), self.cfg), e) for e in evaluated) for p in free}
        if self.sim is not None:
            # Ties (e.g. every prediction unscored) go to the point farthest from what was evaluated.
            best = max(free, key=lambda p: (_score(self._predict(p)), far[p.key()]))
            pred = _score(self._predict(best))
            return best, f"best predicted score ({_fmt(pred)} req/s) of the {len(free)} unevaluated points"
        # Farthest first spreads climbs over the space; the seeded draw breaks ties reproducibly.
        tie = np.random.default_rng((self.cfg.seed, self.state.restarts_used)).random(len(free))
        i = max(range(len(free)), key=lambda j: (far[free[j].key()], tie[j]))
        return free[i], (
            f"farthest unevaluated point ({far[free[i].key()]} value-list steps from the nearest evaluated one)"
        )

    # -- measuring and judging --------------------------------------------------------------------

    def _measure(
        self, point: OperatingPoint, decision: Decision | None = None, why: str = ""
    ) -> Trial | None:
        """Evaluate `point`; None when it gave no figures. A climb's start (`decision`) is recorded here, a
        scored candidate by `_judge`."""
        ev = self.state.prior.pop(point.key(), None)
        if ev is not None:
            seed = evaluation_seed(self.cfg.seed, self.budget.evals_used)
            restart = ev.restart_s > 0  # charged when it was measured
        else:
            ev, restart, seed = self._evaluate(point)
        outcome, reason, fig = self._outcome(ev, seed)
        trial = Trial(point=point, source=ev.source, fig=fig, restart=restart, cost=ev.cost_s)
        if decision is not None and fig is not None:
            self.trace.record_trial(trial, decision, why)
        elif fig is None:
            context = f" ({outcome} point: {why})" if decision is not None else ""
            self.trace.record_trial(trial, outcome, reason + context)
        self.budget.check_time()
        return trial if fig is not None else None

    def _evaluate(self, point: OperatingPoint) -> tuple[Evaluation, bool, int]:
        """One evaluation of `point`, charged to the budget: (evaluation, whether it restarted, seed)."""
        seed = evaluation_seed(self.cfg.seed, self.budget.evals_used)
        restart = needs_restart(self.state.server, point)
        ev = self.ev.evaluate(point, self.cfg.workload, repeats=self.cfg.repeats, seed=seed)
        if ev.unsupported is None:
            self.state.server = point
        self.budget.charge(point, ev, restart)
        return ev, restart, seed

    def _outcome(self, ev: Evaluation, seed: int) -> tuple[Decision, str, Figures | None]:
        state = self.state
        if ev.unsupported is not None:
            u = ev.unsupported
            keep = getattr(state.current or self.cfg.start, u.knob)
            state.fixed[u.knob] = FixedKnob(knob=u.knob, value=keep, reason=f"{u.knob}={u.value}: {u.reason}")
            state.failed.add(ev.point.key())
            return (
                "unsupported",
                f"target cannot honour {u.knob}={u.value} ({u.reason}); fixed at {keep}",
                None,
            )
        fig = compute_figures(ev.runs, ev.point, self.cfg, seed=seed)
        if fig is None:
            state.failed.add(ev.point.key())
            n = sum(len(r.e2el_ms) for r in ev.runs)
            return "too_few_samples", f"{n} completed requests < min_samples {self.cfg.min_samples}", None
        state.keep(ev.point.key(), fig, ev.runs)
        return "accepted", "", fig  # provisional: `_judge` decides against the current point

    def _beats(self, new: OperatingPoint, old: OperatingPoint) -> tuple[bool, float, float]:
        """The acceptance rule: (passes, score gain, threshold) of `new` over `old`, both measured."""
        a, b = self.state.measured[old.key()].score, self.state.measured[new.key()].score
        gain = b.value - a.value
        threshold = max(self.cfg.noise_z * (a.se**2 + b.se**2) ** 0.5, self.cfg.min_gain_rps)
        return gain > threshold, gain, threshold

    def _judge(self, trial: Trial) -> bool:
        accepted, gain, threshold = self._beats(trial.point, self.state.current)
        if accepted:
            self.state.move_to(trial.point, self.cfg)
            reason = f"score gain {_fmt(gain)} req/s > threshold {_fmt(threshold)} req/s"
        else:
            reason = f"score change {_fmt(gain)} req/s ≤ threshold {_fmt(threshold)} req/s (noise or worse)"
        self.trace.record_trial(trial, "accepted" if accepted else "rejected", reason)
        return accepted

    # -- evaluations measured before the climb -----------------------------------------------------

    def _absorb(self, ev: Evaluation) -> None:
        self.budget.charge(ev.point, ev, ev.restart_s > 0)
        if ev.unsupported is None:
            self.state.prior[ev.point.key()] = ev
            return
        decision, reason, _ = self._outcome(ev, self.cfg.seed)
        self.trace.record(ev.point, ev.source, None, decision, reason, restart=True, cost=ev.cost_s)

    def _score_unused_prior(self) -> None:
        """Calibration points the climb never asked for still count as measured (effects, fidelity)."""
        for key, ev in list(self.state.prior.items()):
            fig = compute_figures(ev.runs, ev.point, self.cfg, seed=self.cfg.seed)
            if fig is not None:
                self.state.keep(key, fig, ev.runs)
        self.state.prior.clear()

    # -- confirmation -----------------------------------------------------------------------------

    def _confirm(self) -> None:
        """Fresh, interleaved runs of the best point, the default and its rivals; see tuner.confirm.

        If no confirmed point met the required P(SLO) and the confirmation backed off to a lower
        concurrency that does, the search never explored that region (it climbed past it on lucky runs):
        one more climb starts there, with the points that failed confirmation excluded, and its optimum
        is confirmed again together with the back-off point."""
        first: Confirmation | None = None
        for attempt in (1, 2):
            self.budget.spent = (
                ""  # the search's budget stop does not stop the confirmation its reserve paid for
            )
            left = self.cfg.max_evaluations - self.budget.evals_used
            fresh: dict[Key, list[RunSample]] = {}  # this confirmation's runs of each point
            done = frozenset(p.point.key() for p in first.points) if first else frozenset()
            conf = confirm(
                partial(self._replicate, fresh=fresh),
                self.state.measured,
                self.state.incumbent,
                self.cfg.start,
                self.cfg,
                server=self.state.server,
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
            self._climb_below_the_edge(chosen, fresh[chosen.point.key()])

    def _climb_below_the_edge(self, start, runs: list[RunSample]) -> None:
        state = self.state
        for p in self.confirmation.points:
            if not p.eligible:
                state.failed.add(p.point.key())
        key = start.point.key()
        state.measured[key], state.runs[key] = start.figures, runs
        state.incumbent = state.current = start.point
        state.last_move = None
        state.below_edge = True
        ended = self._ascend()
        self._keep_best()
        self.stop_reason += (
            f"; confirmation backed off to {start.point.label()}, and a climb from there ended: {ended}"
        )

    def _replicate(
        self, point: OperatingPoint, why: str, *, fresh: dict[Key, list[RunSample]]
    ) -> tuple[list[RunSample], float] | None:
        """One confirmation evaluation of `point`, its runs added to `fresh`; None when the budget cannot pay."""
        if not self.budget.fits(point, self.state, reserve=False):
            return None
        ev, restart, seed = self._evaluate(point)
        fig = compute_figures(ev.runs, point, self.cfg, seed=seed) if ev.unsupported is None else None
        note = "" if fig is not None else " (no figures: too few completed requests or refused)"
        self.trace.record(point, ev.source, fig, "confirm", why + note, restart=restart, cost=ev.cost_s)
        fresh.setdefault(point.key(), []).extend(ev.runs if ev.unsupported is None else [])
        return (list(ev.runs) if ev.unsupported is None else [], ev.cost_s)

    # -- the simulator ----------------------------------------------------------------------------

    def _predict(self, point: OperatingPoint) -> Figures | None:
        key = point.key()
        if key not in self.predicted:
            ev = self.sim.evaluate(point, self.cfg.workload, repeats=self.cfg.repeats, seed=self.cfg.seed)
            fig = compute_figures(ev.runs, point, self.cfg, seed=self.cfg.seed)
            self.predicted[key] = fig
        return self.predicted[key]


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
