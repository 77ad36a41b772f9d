"""`evaluate_humaneval`: completions produced elsewhere, judged with the build's sandbox and verdicts
(`factsheet eval humaneval`)."""

from __future__ import annotations

from pathlib import Path

from factsheet.api.results import Result
from factsheet.document.stamp import tool_version
from probes.accuracy import evaluate_samples, write_eval_report
from probes.accuracy.result import EvalReport
from probes.core.files import check_output


class EvalResult(Result):
    """Per-sample verdicts and pass@k, and the files they were written to."""

    report: EvalReport


def evaluate_humaneval(
    samples: Path, output: Path, *, dataset: str | None = None, concurrency: int = 2
) -> EvalResult:
    """Judge an EvalPlus samples JSONL (task_id + completion | solution) against HumanEval+ (`dataset`:
    its .jsonl(.gz), default the bundled one); write eval_report.json and the verdicts into `output`."""
    check_output(Path(output))
    report = evaluate_samples(Path(samples), dataset, concurrency=concurrency)
    written = write_eval_report(report, Path(output), tool_version=tool_version())
    return EvalResult(report=report, written=tuple(written))
