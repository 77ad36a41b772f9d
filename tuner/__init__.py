"""SLO-Tuner: find, measure and justify an operating point that maximises goodput under a p99 SLO."""

from __future__ import annotations

from collections.abc import Callable

from tuner.calibration import CalibrationError, acceptance_rate, fit_speculation, fit_step_model
from tuner.climb import Climb
from tuner.evaluation import Evaluation, Evaluator, RunSample, Unsupported
from tuner.findings import build_result
from tuner.knobs import OperatingPoint, vllm_server_flags
from tuner.live import LiveEvaluator
from tuner.procedure import calibration_points, run_tuning
from tuner.result import Calibration, TraceEntry, TuningResult
from tuner.sim_evaluator import SimulatorEvaluator
from tuner.simulator import SimParams, StepTimeModel, simulate
from tuner.spec import HwCost, KnobSpace, TunerSpec, TunerSpecError, TuningLoad
from tuner.speculation import SpecDecodeCounters, parse_spec_decode_counters, read_spec_decode_counters


def tune(
    evaluator: Evaluator,
    config: TunerSpec,
    *,
    simulator: Evaluator | None = None,
    progress: Callable[[TraceEntry], None] | None = None,
) -> TuningResult:
    """Hill-climb from `config.start` on `evaluator`; `simulator`, if given, pre-screens neighbours."""
    return build_result(Climb(evaluator, config, simulator, progress).run())


__all__ = [
    "Calibration",
    "CalibrationError",
    "Evaluation",
    "Evaluator",
    "HwCost",
    "KnobSpace",
    "LiveEvaluator",
    "OperatingPoint",
    "RunSample",
    "SimParams",
    "SimulatorEvaluator",
    "SpecDecodeCounters",
    "StepTimeModel",
    "TraceEntry",
    "TunerSpec",
    "TunerSpecError",
    "TuningLoad",
    "TuningResult",
    "Unsupported",
    "acceptance_rate",
    "calibration_points",
    "fit_speculation",
    "fit_step_model",
    "parse_spec_decode_counters",
    "read_spec_decode_counters",
    "run_tuning",
    "simulate",
    "tune",
    "vllm_server_flags",
]
