"""The whole tuning run `factsheet build` asks for: calibrate the simulator live, then climb live.

Order of live work (each server start is charged to the time budget):
1. speculation (vLLM target, speculation among the knobs, start point without it): one run at the start
   concurrency with the smallest width k, reading vLLM's spec-decode counters before and after;
2. the default server: the start point (the "before" figure) and one more concurrency ≤ max_num_seqs,
   so the step-time model can be fitted; the server is then already where the climb begins;
3. the hill climb from the start point, the calibrated simulator pre-screening neighbours. Calibration
   runs are the climb's own evaluations when it reaches those points (they are not measured twice).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from probes.core.measurement import NotMeasured
from probes.core.progress import Update
from probes.targets import EndpointTarget, VllmTarget
from tuner.calibration import CalibrationError, fit_speculation, fit_step_model
from tuner.climb import Climb
from tuner.evaluation import Evaluation, evaluation_seed
from tuner.findings import build_result
from tuner.knobs import KNOBS, OperatingPoint
from tuner.live import LiveEvaluator
from tuner.result import Calibration, FixedKnob, TraceEntry, TuningResult
from tuner.sim_evaluator import SimulatorEvaluator
from tuner.simulator import SimParams
from tuner.spec import TunerSpec
from tuner.speculation import SpecDecodeCounters

# Below this budget a speculation server start (≈ 1 min on the embedded CPU target) plus the default
# server's would leave nothing for the climb; speculation is then calibrated by the climb not at all.
MIN_BUDGET_FOR_SPEC_CALIBRATION_S = 240.0


def run_tuning(
    target: VllmTarget | EndpointTarget,
    config: TunerSpec,
    *,
    log: Callable[[str], None] = print,
    progress: Update | None = None,
) -> TuningResult:
    """Calibrate, climb and report within `config.time_budget_s`; always stops the servers it started.
    `progress(used_s, budget_s)` after each evaluation: the budget is the step's length, so a bar over it
    says how long the tuner can still take (it may stop sooner)."""
    t0 = time.perf_counter()
    slo_e2el = config.slo_p99_ms if config.slo_metric == "e2el_ms" else None
    with LiveEvaluator(target, slo_e2el_ms=slo_e2el) as live:
        prior, calibration, params = _calibrate(live, target, config, log)
        sim = SimulatorEvaluator(params) if params is not None else None
        climb = Climb(
            live,
            config,
            sim,
            _progress(log, config, progress),
            prior=prior,
            server=live.server,
            fixed=_fixed(target, config),
        )
        outcome = climb.run()
    log(f"tuning: {outcome.stop_reason} ({time.perf_counter() - t0:.0f} s)")
    return build_result(outcome, calibration=calibration)


def _fixed(target, config: TunerSpec) -> list[FixedKnob]:
    """An endpoint's launch flags are not the tool's: its restart knobs stay at the start's values."""
    if not isinstance(target, EndpointTarget):
        return []
    return [
        FixedKnob(
            knob=knob,
            value=getattr(config.start, knob),
            reason="endpoint target: its launch flags are not under the tool's control",
        )  # fmt: skip
        for knob, info in KNOBS.items()
        if info.restart
    ]


def _progress(
    log: Callable[[str], None], config: TunerSpec, progress: Update | None
) -> Callable[[TraceEntry], None]:
    used = [0.0]  # seconds charged to the budget so far (each entry's cost)

    def show(e: TraceEntry) -> None:
        fig = e.figures
        figs = "" if fig is None else f" goodput {fig.goodput.value:.3g} req/s, p99 {fig.p99.value:.4g} ms;"
        log(f"tuning {e.index}: [{e.source}] {e.point.label()}:{figs} {e.decision} — {e.reason}")
        used[0] += e.cost_s
        if progress is not None:
            budget = round(config.time_budget_s)
            progress(min(round(used[0]), budget), budget)

    return show


def calibration_points(target, config: TunerSpec) -> list[OperatingPoint]:
    """Live points measured before the climb, in order (speculation server first, default server last)."""
    start = config.start
    base = start.with_knob("spec_k", 0)
    points = [base.with_knob("concurrency", c) for c in _fit_concurrencies(config)]
    spec = [k for k in config.knobs.spec_k if k > 0]
    if (
        isinstance(target, VllmTarget)
        and spec
        and start.spec_k == 0
        and config.time_budget_s >= MIN_BUDGET_FOR_SPEC_CALIBRATION_S
    ):
        points.insert(0, start.with_knob("spec_k", spec[0]))
    if start not in points:
        points.append(start)
    # Measure on the start's server last, so the climb begins without a restart.
    return sorted(points, key=lambda p: (p.server_key() == start.server_key(), p == start))


def _fit_concurrencies(config: TunerSpec) -> list[int]:
    """The start's concurrency (or the nearest that fits its batch limit) and the one nearest a quarter
    of it: a wide lever arm separates the per-step and per-sequence costs, which two neighbouring
    concurrencies (12 and 16 live) left trading off against each other."""
    start = config.start
    fit = [c for c in config.knobs.concurrency if c <= start.max_num_seqs]
    if not fit:
        return []
    first = min(fit, key=lambda c: (abs(c - start.concurrency), -c))
    others = [c for c in fit if c != first]
    if not others:
        return [first]
    partner = min(others, key=lambda c: (abs(math.log(c) - math.log(first / 4)), -c))  # tie: faster run
    return [first, partner]


def _calibrate(live: LiveEvaluator, target, config: TunerSpec, log):
    t0 = time.perf_counter()
    evals: list[Evaluation] = []
    counters: SpecDecodeCounters | None | NotMeasured = None
    for i, point in enumerate(calibration_points(target, config)):
        log(f"tuning: calibration run at {point.label()}")
        ev = live.evaluate(
            point, config.workload, repeats=config.repeats, seed=evaluation_seed(config.seed, i)
        )
        if point.spec_k and ev.unsupported is None:
            # The speculation server was started for this run, so its counters count this run alone.
            counters = _read_counters(live)
        evals.append(ev)
    params, notes = _fit(evals, config, counters)
    calibration = Calibration(
        points=[e.point for e in evals],
        time_s=time.perf_counter() - t0,
        simulator=params if params is not None else NotMeasured(reason="; ".join(notes)),
        spec_decode=counters if counters is not None else NotMeasured(reason=_no_spec_reason(evals)),
        notes=notes,
    )
    return evals, calibration, params


def _read_counters(live: LiveEvaluator) -> SpecDecodeCounters | NotMeasured:
    try:
        after = live.spec_decode_counters()
    except CalibrationError as exc:
        return NotMeasured(reason=str(exc))
    if after is None:
        return NotMeasured(reason="the server exported no vllm:spec_decode_* counters with speculation on")
    return after


def _no_spec_reason(evals: list[Evaluation]) -> str:
    refused = [e.unsupported.reason for e in evals if e.unsupported is not None]
    if refused:
        return "speculation could not be started: " + refused[0]
    return "no speculation run during calibration (not among the knobs, endpoint target, or budget too small)"


def _fit(evals: list[Evaluation], config: TunerSpec, counters) -> tuple[SimParams | None, list[str]]:
    runs = [(e.point, r) for e in evals if e.unsupported is None for r in e.runs]
    restart_s = max((e.restart_s for e in evals), default=0.0)
    notes: list[str] = []
    try:
        params = fit_step_model(runs, config.workload, restart_s=restart_s)
    except CalibrationError as exc:
        return None, [f"simulator not calibrated: {exc}"]
    spec_runs = [(p, r) for p, r in runs if p.spec_k > 0]
    if not spec_runs:
        notes.append("speculation not calibrated: no live run with speculation on")
    elif isinstance(counters, SpecDecodeCounters):
        try:
            alpha = counters.acceptance_rate()
            params = fit_speculation(params, *spec_runs[0], alpha)
        except CalibrationError as exc:
            notes.append(f"speculation not calibrated: {exc}")
    else:
        notes.append(f"speculation not calibrated: {getattr(counters, 'reason', 'no counters')}")
    return params, notes
