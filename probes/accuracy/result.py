"""What the accuracy probe reports."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from probes.accuracy.dataset import DatasetInfo
from probes.accuracy.harness import SampleVerdict
from probes.accuracy.parity import JudgeParity
from probes.accuracy.passk import ESTIMATOR
from probes.core.measurement import Model

PASS_DEFINITION = (
    "base: the program's output equals the canonical solution's on every base input (floats within the "
    "task's atol); plus (HumanEval+): the same on every base and plus input"
)


class SampleRecord(SampleVerdict):
    """One generated sample with its verdicts: a raw record of the factsheet."""

    reply: str | None = Field(None, description="text the endpoint returned")
    program: str = Field(description="program that was judged")
    generation_error: str | None = Field(None, description="why no reply was obtained, if so")


class PassRates(Model):
    base: dict[str, float] = Field(description="'pass@k' -> fraction of tasks, base tests")
    plus: dict[str, float] | None = Field(description="same on base+plus tests; None if no plus tests exist")
    definition: str = PASS_DEFINITION
    estimator: str = ESTIMATOR
    n_tasks: int = Field(ge=0)
    n_samples_per_task: int = Field(ge=1)


class Timings(Model):
    generation_s: float = Field(ge=0, description="wall-clock of all generation requests")
    expected_outputs_s: float = Field(ge=0, description="computing or loading canonical outputs")
    evaluation_s: float = Field(ge=0, description="wall-clock of sandboxed judging")


class AccuracyResult(Model):
    benchmark: Literal["HumanEval+", "HumanEval (base tests only)", "HumanEval+ Mini"] | str
    dataset: DatasetInfo
    tests_run: list[Literal["base", "plus"]]
    mode: Literal["chat", "completion"]
    prompting: str = Field(description="how prompts were built and code was extracted")
    subset: str = Field(description="statement of which tasks ran")
    temperature: float
    sampling: dict[str, float | int | bool | str] = Field(
        default_factory=dict, description="every sampling parameter sent with each generation request"
    )
    max_tokens: int
    pass_rates: PassRates
    generation_failures: int = Field(ge=0, description="samples with no reply (counted as failing)")
    isolation: list[str] = Field(description="sandbox mechanisms in force for every judged sample")
    judge_parity: JudgeParity | None = Field(
        None, description="this judge's measured agreement with EvalPlus (HumanEval+ only; None: not stated)"
    )
    timings: Timings
    per_task: list[SampleRecord] = Field(description="raw per-sample records (written as JSONL)")


class EvalReport(Model):
    """`factsheet eval humaneval`: verdicts for samples produced elsewhere."""

    dataset: DatasetInfo
    tests_run: list[Literal["base", "plus"]]
    samples_path: str
    samples_sha256: str
    pass_rates: PassRates
    isolation: list[str]
    judge_parity: JudgeParity | None = Field(
        None, description="this judge's measured agreement with EvalPlus"
    )
    evaluation_s: float = Field(ge=0)
    per_sample: list[SampleVerdict]
