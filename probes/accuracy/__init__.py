"""HumanEval+ accuracy through the serving endpoint, judged in an OS-level sandbox."""

from probes.accuracy.dataset import DatasetInfo, load_dataset
from probes.accuracy.errors import AccuracyError
from probes.accuracy.evaluate import evaluate_samples, write_eval_report
from probes.accuracy.harness import SampleVerdict, TestVerdict
from probes.accuracy.result import AccuracyResult, EvalReport, PassRates, SampleRecord
from probes.accuracy.run import run_humaneval
from probes.accuracy.sandbox import SandboxLimits
from probes.accuracy.spec import HumanEvalSpec, SubsetSpec

__all__ = [
    "AccuracyError",
    "AccuracyResult",
    "DatasetInfo",
    "EvalReport",
    "HumanEvalSpec",
    "PassRates",
    "SampleRecord",
    "SampleVerdict",
    "SandboxLimits",
    "SubsetSpec",
    "TestVerdict",
    "evaluate_samples",
    "load_dataset",
    "run_humaneval",
    "write_eval_report",
]
