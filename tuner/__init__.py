"""SLO-Tuner: find, measure and justify an operating point that maximises goodput under a p99 SLO."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.calibration import CalibrationError, acceptance_rate, fit_speculation, fit_step_model
    from tuner.evaluation import Evaluation, Evaluator, RunSample, Unsupported
    from tuner.findings import tune
    from tuner.knobs import OperatingPoint, vllm_server_flags
    from tuner.live import LiveEvaluator
    from tuner.procedure import calibration_points, run_tuning
    from tuner.result import Calibration, TraceEntry, TuningResult
    from tuner.sim_evaluator import SimulatorEvaluator
    from tuner.simulator import SimParams, StepTimeModel, simulate
    from tuner.spec import HwCost, KnobSpace, TunerSpec, TunerSpecError, TuningLoad
    from tuner.speculation import SpecDecodeCounters, parse_spec_decode_counters, read_spec_decode_counters

# Each public name's module, loaded on first use (PEP 562): the factsheet's document model needs tuner.result
# alone, and a command should not pay for the climb, the simulator and scipy at its start.
_WHERE = {
    **dict.fromkeys(
        ["CalibrationError", "acceptance_rate", "fit_speculation", "fit_step_model"], "tuner.calibration"
    ),
    **dict.fromkeys(["Evaluation", "Evaluator", "RunSample", "Unsupported"], "tuner.evaluation"),
    **dict.fromkeys(["tune"], "tuner.findings"),
    **dict.fromkeys(["OperatingPoint", "vllm_server_flags"], "tuner.knobs"),
    **dict.fromkeys(["LiveEvaluator"], "tuner.live"),
    **dict.fromkeys(["calibration_points", "run_tuning"], "tuner.procedure"),
    **dict.fromkeys(["Calibration", "TraceEntry", "TuningResult"], "tuner.result"),
    **dict.fromkeys(["SimulatorEvaluator"], "tuner.sim_evaluator"),
    **dict.fromkeys(["SimParams", "StepTimeModel", "simulate"], "tuner.simulator"),
    **dict.fromkeys(["HwCost", "KnobSpace", "TunerSpec", "TunerSpecError", "TuningLoad"], "tuner.spec"),
    **dict.fromkeys(
        ["SpecDecodeCounters", "parse_spec_decode_counters", "read_spec_decode_counters"], "tuner.speculation"
    ),
}


def __getattr__(name: str) -> object:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'tuner' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


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
