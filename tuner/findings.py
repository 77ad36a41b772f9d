"""Turn a finished climb into a TuningResult: effects of knobs, simulator fidelity, justification."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from probes.core.measurement import NotMeasured
from tuner.climb import ACCEPTANCE_RULE, Climb, ClimbOutcome
from tuner.confirm import Confirmation, ConfirmedPoint, slo_probability
from tuner.estimates import Estimate, Figures
from tuner.evaluation import Evaluator
from tuner.knobs import KNOBS, OperatingPoint, changed_knobs
from tuner.result import (
    Budget,
    Calibration,
    Fidelity,
    FidelityFigures,
    KnobEffect,
    PointFigures,
    ScoreDefinition,
    TraceEntry,
    TuningResult,
)
from tuner.spec import TunerSpec


def tune(
    evaluator: Evaluator,
    config: TunerSpec,
    *,
    simulator: Evaluator | None = None,
    progress: Callable[[TraceEntry], None] | None = None,
) -> TuningResult:
    """Hill-climb from `config.start` on `evaluator`; `simulator`, if given, pre-screens neighbours."""
    return build_result(Climb(evaluator, config, simulator, progress).run())


def build_result(
    outcome: ClimbOutcome, *, calibration: Calibration | NotMeasured | None = None
) -> TuningResult:
    cfg = outcome.config
    default = _point_figures(outcome, cfg.start)
    recommended = _point_figures(outcome, outcome.recommended) if outcome.recommended else default
    effects = knob_effects(outcome)
    result = TuningResult(
        score=ScoreDefinition(
            slo_metric=cfg.slo_metric,
            slo_p99_ms=cfg.slo_p99_ms,
            penalty_lambda=cfg.penalty_lambda,
            hw_cost=cfg.hw_cost.describe(),
            acceptance_rule=ACCEPTANCE_RULE
            + f" (z = {cfg.noise_z:g}, min_gain = {cfg.min_gain_rps:g} req/s)",
        ),
        default=default,
        recommended=recommended,
        goodput_ratio=goodput_ratio(default, recommended),
        confirmation=outcome.confirmation
        if outcome.confirmation is not None
        else NotMeasured(reason=_no_confirmation_reason(outcome)),
        trace=list(outcome.trace),
        knob_effects=effects,
        fixed_knobs=list(outcome.fixed_knobs),
        fidelity=fidelity(outcome, calibration),
        calibration=calibration
        if calibration is not None
        else NotMeasured(reason="tuned on the evaluators given, without live calibration"),
        stop_reason=outcome.stop_reason,
        budget=Budget(
            evaluations_used=outcome.evaluations_used,
            evaluations_allowed=cfg.max_evaluations,
            time_used_s=outcome.time_used_s,
            time_allowed_s=cfg.time_budget_s,
        ),
        justification="",
    )
    result.justification = justify(result)
    return result


def _no_confirmation_reason(outcome: ClimbOutcome) -> str:
    if outcome.config.confirm_runs == 0:
        return "confirm_runs is 0: the search's best is recommended as measured"
    return "no point was scored, so there was nothing to confirm"


def _point_figures(outcome: ClimbOutcome, point: OperatingPoint) -> PointFigures | NotMeasured:
    fig = outcome.measured.get(point.key())
    if fig is None:
        return NotMeasured(reason=f"{point.label()} was not scored (see the trace)")
    conf = _confirmed(outcome.confirmation, point)
    if conf is not None:
        return PointFigures(
            point=point, source=outcome.source, figures=conf.figures, slo_probability=conf.slo_probability,
            basis=f"pooled over {conf.fresh_runs} fresh confirmation run(s), interleaved with the other "
            "confirmed points (the search's own evaluation, selection-biased, is in the trace)",
        )  # fmt: skip
    runs = list(outcome.runs.get(point.key(), ()))
    basis = f"the search's own evaluation ({len(runs)} run(s)), not confirmed"
    if point == outcome.search_best and len(outcome.measured) > 1:
        basis += f"; chosen as the best of {len(outcome.measured)} measured points, so biased upward"
    prob = slo_probability(runs, outcome.config, seed=outcome.config.seed, basis=basis)
    return PointFigures(
        point=point, source=outcome.source, figures=fig, basis=basis,
        slo_probability=prob if prob is not None else NotMeasured(reason="no completed requests"),
    )  # fmt: skip


def _confirmed(confirmation: Confirmation | None, point: OperatingPoint) -> ConfirmedPoint | None:
    if confirmation is None:
        return None
    return next(
        (c for c in confirmation.points if c.point == point and c.figures is not None and c.slo_probability),
        None,
    )


def goodput_ratio(default, recommended) -> Estimate | NotMeasured:
    if isinstance(default, NotMeasured) or isinstance(recommended, NotMeasured):
        return NotMeasured(reason="default or recommended point has no figures")
    g0, g1 = default.figures.goodput, recommended.figures.goodput
    if g0.value <= 0:
        return NotMeasured(reason="default goodput is 0 req/s, so the ratio is undefined")
    r = g1.value / g0.value
    # Delta method on independent estimates.
    se = r * float(np.hypot(g0.se / g0.value, g1.se / g1.value if g1.value > 0 else 0.0))
    return Estimate(
        value=r, se=se, ci_low=max(0.0, r - 1.96 * se), ci_high=r + 1.96 * se, unit="ratio",
        definition="recommended goodput / default goodput (SE by the delta method, 95 % CI = ±1.96 SE, floored at 0)",
        n=g0.n + g1.n,
    )  # fmt: skip


def knob_effects(outcome: ClimbOutcome) -> list[KnobEffect]:
    """Per knob, the largest measured score change between points that differ only in that knob."""
    pts = [
        (OperatingPoint(concurrency=k[0], max_num_seqs=k[1], spec_k=k[2]), f)
        for k, f in outcome.measured.items()
    ]
    z = outcome.config.noise_z
    rec = outcome.recommended or outcome.config.start
    out = []
    for knob in KNOBS:
        best: tuple[float, float] | None = None
        for i, (a, fa) in enumerate(pts):
            for b, fb in pts[i + 1 :]:
                if changed_knobs(a, b) != [knob]:
                    continue
                delta = abs(fa.score.value - fb.score.value)
                noise = z * float(np.hypot(fa.score.se, fb.score.se))
                if best is None or delta > best[0]:
                    best = (delta, noise)
        out.append(_effect(knob, outcome, rec, best))
    return out


def _effect(knob, outcome: ClimbOutcome, rec, best) -> KnobEffect:
    d, r = getattr(outcome.config.start, knob), getattr(rec, knob)
    fixed = {f.knob: f for f in outcome.fixed_knobs}
    if knob in fixed:
        basis = f"fixed: {fixed[knob].reason}"
    elif best is None:
        basis = "no two measured points differ only in this knob"
    else:
        basis = "largest one-knob score difference among measured points vs z·SE of that difference"
    return KnobEffect(
        knob=knob, default=d, recommended=r,
        largest_score_change_rps=None if best is None else best[0],
        noise_rps=None if best is None else best[1],
        mattered=best is not None and best[0] > best[1],
        basis=basis,
    )  # fmt: skip


def fidelity(
    outcome: ClimbOutcome, calibration: Calibration | NotMeasured | None = None
) -> Fidelity | NotMeasured:
    if outcome.predicted is None:
        return NotMeasured(reason="no simulator was given to the tuner")
    if outcome.source != "live":
        return NotMeasured(reason="evaluations were simulated; fidelity needs live measurements")
    rows = []
    for key, live in outcome.measured.items():
        point = OperatingPoint(concurrency=key[0], max_num_seqs=key[1], spec_k=key[2])
        pred = outcome.predicted.get(key)
        if pred is not None:
            rows.append((point, live, pred))
    if len(rows) < 2:
        return NotMeasured(reason=f"{len(rows)} live points with a prediction; need at least 2")
    # Points the simulator was fitted to are in-sample; only the others test its predictions.
    fitted = {p.key() for p in calibration.points} if isinstance(calibration, Calibration) else set()
    unseen = [r for r in rows if r[0].key() not in fitted]
    out: FidelityFigures | NotMeasured = (
        _figures(unseen)
        if len(unseen) >= 2
        else NotMeasured(reason=f"{len(unseen)} live points outside the calibration set; need at least 2")
    )
    return Fidelity(
        **_figures(rows).model_dump(),
        out_of_sample=out,
        points=[_point_row(p, lf, sf, "in" if p.key() in fitted else "out") for p, lf, sf in rows],
        method="Spearman rank correlation of p99 over live-measured points (scipy.stats.spearmanr); "
        "goodput error = mean |simulated − live| (absolute, and relative to live where live > 0); "
        f"{len(rows) - len(unseen)} of the {len(rows)} points were calibration points (in-sample), "
        "out_of_sample repeats the figures without them",
    )


def _figures(rows: list[tuple[OperatingPoint, Figures, Figures]]) -> FidelityFigures:
    live_p99 = np.array([r[1].p99.value for r in rows])
    sim_p99 = np.array([r[2].p99.value for r in rows])
    live_g = np.array([r[1].goodput.value for r in rows])
    sim_g = np.array([r[2].goodput.value for r in rows])
    if len(rows) < 3 or np.ptp(live_p99) == 0 or np.ptp(sim_p99) == 0:
        rho: float | NotMeasured = NotMeasured(
            reason="rank correlation needs ≥3 points with varying p99 in both live and simulated figures"
        )
    else:
        # deferred: importing scipy.stats costs every command ~0.7 s of CPU at its start
        from scipy.stats import spearmanr

        rho = float(spearmanr(live_p99, sim_p99).statistic)
    pos = live_g > 0
    rel = (
        float(np.mean(np.abs(sim_g[pos] - live_g[pos]) / live_g[pos]))
        if pos.any()
        else NotMeasured(reason="every live goodput was 0 req/s")
    )
    return FidelityFigures(
        n_points=len(rows),
        p99_spearman=rho,
        goodput_mean_abs_error_rps=float(np.mean(np.abs(sim_g - live_g))),
        goodput_mean_rel_error=rel,
    )


def _point_row(p: OperatingPoint, live: Figures, sim: Figures, sample: str) -> dict[str, float | str]:
    return {
        "point": p.label(),
        "sample": sample,
        "live_p99_ms": live.p99.value,
        "sim_p99_ms": sim.p99.value,
        "live_goodput_rps": live.goodput.value,
        "sim_goodput_rps": sim.goodput.value,
    }


def justify(result: TuningResult) -> str:
    """A paragraph written from the figures; states only what the trace and figures show."""
    s = result.score
    parts = [
        f"Score: goodput minus λ = {s.penalty_lambda:g} (req/s)/s times the p99 {s.slo_metric} excess over the "
        f"{s.slo_p99_ms:g} ms SLO, minus {s.hw_cost}."
    ]
    d, r = result.default, result.recommended
    if isinstance(d, NotMeasured) or isinstance(r, NotMeasured):
        parts.append(
            f"No recommendation could be made: {getattr(d, 'reason', '')} {getattr(r, 'reason', '')}".strip()
        )
        parts.append(f"Stopped: {result.stop_reason}.")
        return " ".join(parts)
    restarts = sum(e.decision == "restart" for e in result.trace)
    parts.append(_compare(d, r, result.goodput_ratio, restarts))
    parts.append(_confirmation_sentence(result.confirmation, d, r))
    accepted = [e for e in result.trace if e.decision == "accepted"]
    measured = [e for e in result.trace if e.source != "simulator" or e.decision not in ("screened_out",)]
    parts.append(
        f"{len(measured)} evaluations ({len(accepted)} accepted moves"
        f"{_confirm_count(result.confirmation)}) within "
        f"{result.budget.time_used_s:.0f} s of {result.budget.time_allowed_s:g} s; stopped because: "
        f"{result.stop_reason}."
    )
    if restarts:
        parts.append(
            f"After the first climb's local optimum the search restarted {restarts} time(s) from an unevaluated "
            "point (see the trace's restart entries); a later climb's optimum replaced the best so far only if "
            "it beat it beyond noise."
        )
    mattered = [e.knob for e in result.knob_effects if e.mattered]
    flat = [e.knob for e in result.knob_effects if not e.mattered and e.largest_score_change_rps is not None]
    if mattered:
        parts.append("Knobs whose one-step change moved the score beyond noise: " + ", ".join(mattered) + ".")
    if flat:
        parts.append("Knobs whose measured changes stayed within noise: " + ", ".join(flat) + ".")
    for f in result.fixed_knobs:
        parts.append(f"Knob {f.knob} was held at {f.value}: {f.reason}.")
    parts.append(_calibration_sentence(result.calibration))
    return " ".join(p for p in parts if p)


def _confirm_count(conf: Confirmation | NotMeasured) -> str:
    return f", {conf.evaluations} confirmation runs" if isinstance(conf, Confirmation) else ""


def _confirmation_sentence(conf: Confirmation | NotMeasured, d: PointFigures, r: PointFigures) -> str:
    def p(pf: PointFigures) -> str:
        sp = pf.slo_probability
        if isinstance(sp, NotMeasured):
            return "not estimated"
        bound = "" if sp.lower_bound is None else f", {sp.confidence:g} lower bound {sp.lower_bound:.2f}"
        return f"{sp.value:.2f}{bound} ({sp.runs_met} of {sp.runs} run(s) met it; {sp.basis})"

    probs = f"Estimated probability of meeting the SLO in a fresh run: recommended {p(r)}" + (
        "." if d.point == r.point else f"; default {p(d)}."
    )
    if not isinstance(conf, Confirmation):
        return f"Not confirmed ({conf.reason}). {probs}"
    n = len(conf.points)
    return (
        f"Before recommending, {n} point(s) (the search's best, the default and rivals within noise) were "
        f"measured again, {conf.runs_per_point} fresh run(s) each in interleaved rounds "
        f"({conf.evaluations} evaluations, {conf.time_s:.0f} s, charged to the budget); chosen from those "
        f"runs alone: {conf.reason}. {probs}"
    )


def _calibration_sentence(cal: Calibration | NotMeasured) -> str:
    if not isinstance(cal, Calibration):
        return ""
    sim = cal.simulator
    if isinstance(sim, NotMeasured):
        return f"No simulator pre-screening: {sim.reason}."
    text = f"The screening simulator was calibrated from {len(cal.points)} live runs ({cal.time_s:.0f} s): {sim.provenance}."
    return text + "".join(f" {n[0].upper()}{n[1:]}." for n in cal.notes)


def _compare(d: PointFigures, r: PointFigures, ratio, restarts: int = 0) -> str:
    gd, gr, pd, pr = d.figures.goodput, r.figures.goodput, d.figures.p99, r.figures.p99
    if d.point == r.point:
        rivals = "no neighbour, nor any later climb's optimum," if restarts else "no neighbour"
        return (
            f"The default point ({d.point.label()}) is recommended: {rivals} beat it beyond noise "
            f"(goodput {gd.value:.3g} req/s [{gd.ci_low:.3g}, {gd.ci_high:.3g}], p99 {pd.value:.4g} ms, n={gd.n})."
        )
    ratio_txt = f" (×{ratio.value:.2f})" if isinstance(ratio, Estimate) else ""
    return (
        f"Recommended {r.point.label()} over the default {d.point.label()}: goodput {gr.value:.3g} req/s "
        f"[95 % CI {gr.ci_low:.3g}–{gr.ci_high:.3g}, n={gr.n}] vs {gd.value:.3g} [{gd.ci_low:.3g}–{gd.ci_high:.3g}, "
        f"n={gd.n}]{ratio_txt}; p99 {pr.value:.4g} ms [{pr.ci_low:.4g}–{pr.ci_high:.4g}] vs {pd.value:.4g} ms."
    )
