"""pass@k recomputed from the per-sample verdicts kept as raw records."""

from __future__ import annotations

from pathlib import Path

from factsheet.binding import accuracy_context
from factsheet.document.schema import AccuracySection
from factsheet.rederive.compare import Discrepancy, differences
from factsheet.rederive.records import Binding, Expected, read_records
from probes.accuracy.result import SampleRecord
from probes.accuracy.run import pass_rates

# Where each field of the accuracy context is stated in factsheet.json.
_FIELDS = {
    key: f"accuracy.result.{key}"
    for key in (
        "benchmark",
        "dataset",
        "tests_run",
        "mode",
        "prompting",
        "subset",
        "temperature",
        "sampling",
        "max_tokens",
    )
} | {"n_samples_per_task": "accuracy.result.pass_rates.n_samples_per_task"}


def accuracy(section: AccuracySection, folder: Path, binding: Binding | None = None) -> list[Discrepancy]:
    res, src = section.result, section.records.path
    samples, out = read_records(
        folder,
        section.records,
        SampleRecord.model_validate,
        "accuracy.records",
        Expected(accuracy_context(res), _FIELDS),
        binding,
    )
    if samples is None:
        return out
    out += differences(res.per_task, samples, "accuracy.result.per_task", src)
    out += differences(res.pass_rates, pass_rates(samples, res.dataset), "accuracy.result.pass_rates", src)
    failures = sum(s.generation_error is not None for s in samples)
    out += differences(res.generation_failures, failures, "accuracy.result.generation_failures", src)
    return out
