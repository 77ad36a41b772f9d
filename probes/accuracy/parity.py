"""The judge's measured agreement with EvalPlus, the reference HumanEval+ evaluator.

The figure comes from bench/humaneval_parity.py; its results file (bench/humaneval_parity_results.md)
carries the same numbers on its PARITY_RECORD line, and tests/accuracy/test_parity_record.py checks that
the two agree. Update both together, from a bench run, never by hand.
"""

from __future__ import annotations

from pydantic import Field

from probes.core.measurement import Model


class JudgeParity(Model):
    """How often this judge's verdicts equal the reference evaluator's on the same programs."""

    reference: str = Field(description="reference evaluator and version")
    measured_on: str = Field(description="date of the bench run (ISO 8601)")
    samples: int = Field(ge=0, description="programs judged by both")
    samples_counted: int = Field(
        ge=0,
        description="programs whose reference verdict is known right (the rest are explained exceptions)",
    )
    verdicts: int = Field(ge=0, description="verdicts compared: base and plus for each counted program")
    verdicts_agreeing: int = Field(ge=0)
    scope: str = Field(description="what the programs were")
    bench: str = Field(description="command that measured it, and where its results are")

    @property
    def agreement(self) -> float:
        return self.verdicts_agreeing / self.verdicts if self.verdicts else 0.0


EVALPLUS_PARITY = JudgeParity(
    reference="evalplus 0.3.1",
    measured_on="2026-11-30",
    samples=695,
    samples_counted=688,
    verdicts=1376,
    verdicts_agreeing=1376,
    scope="the 164 canonical solutions, the embedded SmolLM2-135M's 164 greedy chat generations (as our "
    "sanitizer and as EvalPlus's sanitizer extract them) and its 164 greedy completion-mode generations, "
    "and 39 borderline programs (float tolerance, output types, None returns, mutated inputs, time limits, "
    "recursion headroom, memory, names leaked by a runner)",
    bench="python bench/humaneval_parity.py (bench/humaneval_parity_results.md)",
)
