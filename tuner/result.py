"""What a tuning run reports: the score, default vs recommended point, the full trace, and why."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from probes.core.measurement import Model, NotMeasured
from tuner.confirm import Confirmation, SloProbability
from tuner.estimates import Estimate, Figures
from tuner.evaluation import Source
from tuner.knobs import OperatingPoint
from tuner.simulator import SimParams
from tuner.spec import SloMetric
from tuner.speculation import SpecDecodeCounters

# "start": the default, measured first; "restart": the first point of a later climb (see TunerSpec.restarts);
# "confirm": a fresh run of a point measured before, made to choose the recommendation (tuner.confirm).
Decision = Literal[
    "start",
    "restart",
    "accepted",
    "rejected",
    "screened_out",
    "unsupported",
    "too_few_samples",
    "predicted",
    "confirm",
]


BEFORE_CONFIRMATION = (
    "not estimated: written by a tuner that did not confirm its recommendation (an older schema)"
)


class ScoreDefinition(Model):
    slo_metric: SloMetric
    slo_p99_ms: float
    penalty_lambda: float = Field(description="λ in (req/s) per second of p99 above the SLO")
    hw_cost: str = Field(description="hw_cost(K) as configured, in req/s")
    formula: str = (
        "S(K) = goodput(K) − λ·max(0, p99(K) − SLO) − hw_cost(K); goodput in req/s (requests meeting the "
        "SLO threshold per second), p99 and SLO in ms, λ in (req/s) per second of p99 above the SLO, "
        "hw_cost in req/s"
    )
    acceptance_rule: str


class TraceEntry(Model):
    """One evaluation or prediction, kept whether or not it moved the climb: the trace is evidence."""

    index: int
    point: OperatingPoint
    source: Source
    figures: Figures | None = None
    restart: bool = Field(
        False, description="the server was (re)started for this evaluation; decision 'restart' is a new climb"
    )
    cost_s: float = Field(0.0, description="time charged to the budget (s)")
    decision: Decision
    reason: str


class PointFigures(Model):
    point: OperatingPoint
    source: Source
    figures: Figures
    # Both added in a later factsheet schema: the first has neither.
    basis: str | None = Field(
        None, description="which runs the figures pool: fresh confirmation runs or the search's own"
    )
    slo_probability: SloProbability | NotMeasured = Field(
        default_factory=lambda: NotMeasured(reason=BEFORE_CONFIRMATION),
        description="estimated probability that a fresh run of this point meets the p99 SLO",
    )


class FixedKnob(Model):
    knob: str
    value: int
    reason: str


class KnobEffect(Model):
    knob: str
    default: int
    recommended: int
    largest_score_change_rps: float | None = Field(
        description="largest |ΔS| between measured points differing only in this knob (req/s)"
    )
    noise_rps: float | None = Field(description="z × SE of that difference (req/s)")
    mattered: bool
    basis: str


class FidelityFigures(Model):
    """Agreement of simulated and live figures over a set of points."""

    n_points: int
    p99_spearman: float | NotMeasured
    goodput_mean_abs_error_rps: float
    goodput_mean_rel_error: float | NotMeasured


class Fidelity(FidelityFigures):
    """How well the simulator's predictions ranked and sized the live measurements (all points)."""

    out_of_sample: FidelityFigures | NotMeasured = Field(
        description="the same figures over only the points the simulator was not calibrated on"
    )
    points: list[dict[str, float | str]] = Field(description="per point; sample 'in' = a calibration point")
    method: str


class Budget(Model):
    evaluations_used: int
    evaluations_allowed: int
    time_used_s: float
    time_allowed_s: float


class Calibration(Model):
    """Live measurements the simulator was fitted to before the climb, and what came of the fit."""

    points: list[OperatingPoint] = Field(description="live points measured, in order")
    time_s: float = Field(description="wall time of calibration, server starts included (s)")
    simulator: SimParams | NotMeasured
    spec_decode: SpecDecodeCounters | NotMeasured = Field(
        description="vLLM spec-decode counters over the speculation run"
    )
    notes: list[str] = Field(default_factory=list)


class TuningResult(Model):
    score: ScoreDefinition
    default: PointFigures | NotMeasured
    recommended: PointFigures | NotMeasured
    goodput_ratio: Estimate | NotMeasured = Field(description="recommended / default goodput")
    confirmation: Confirmation | NotMeasured = Field(
        default_factory=lambda: NotMeasured(reason=BEFORE_CONFIRMATION),
        description="fresh, interleaved runs of the search's best point and its rivals, and the choice made",
    )
    trace: list[TraceEntry]
    knob_effects: list[KnobEffect]
    fixed_knobs: list[FixedKnob]
    fidelity: Fidelity | NotMeasured
    calibration: Calibration | NotMeasured = Field(
        description="live calibration of the simulator (run_tuning); not measured when tuned on given evaluators"
    )
    stop_reason: str
    budget: Budget
    justification: str
