"""`factsheet eval humaneval`: judge samples produced elsewhere (EvalPlus samples format)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from probes.accuracy.dataset import Dataset, load_dataset
from probes.accuracy.errors import AccuracyError
from probes.accuracy.harness import Job, expected_outputs, judge_many, program_for
from probes.accuracy.result import EvalReport
from probes.accuracy.run import judge_parity, pass_rates, tests_run
from probes.accuracy.sandbox import SandboxLimits
from probes.core.files import write_atomic


def evaluate_samples(
    samples_path: Path,
    dataset: str | None = None,
    *,
    limits: SandboxLimits | None = None,
    concurrency: int = 2,
    graded: bool = False,
) -> EvalReport:
    """Per-sample base/plus verdicts and pass@k for a JSONL of {task_id, completion | solution}; `graded`:
    also the inputs passed per set (`TestVerdict.n_passed`, same verdicts)."""
    limits = limits or SandboxLimits()
    data = load_dataset(dataset)
    raw = _read(samples_path)
    jobs = _jobs(raw, samples_path, data)
    expected = expected_outputs(data, limits, concurrency=concurrency)
    start = time.monotonic()
    verdicts, isolation = judge_many(jobs, expected, limits, concurrency=concurrency, graded=graded)
    return EvalReport(
        dataset=data.info,
        tests_run=tests_run(data),
        samples_path=str(samples_path),
        samples_sha256=hashlib.sha256(raw).hexdigest(),
        pass_rates=pass_rates(verdicts, data.info),
        isolation=isolation,
        judge_parity=judge_parity(data),
        evaluation_s=time.monotonic() - start,
        per_sample=verdicts,
    )


def write_eval_report(report: EvalReport, out_dir: Path, *, tool_version: str | None = None) -> list[Path]:
    """eval_report.json (summary, with the writing tool's version when given) and eval_samples.jsonl (one
    verdict a line), each written atomically."""
    summary = report.model_dump(mode="json", exclude={"per_sample"})
    if tool_version is not None:
        summary["tool_version"] = tool_version
    lines = "".join(v.model_dump_json() + "\n" for v in report.per_sample)
    # The verdicts first: a report on disk always has its verdicts beside it.
    samples = write_atomic(out_dir / "eval_samples.jsonl", lines)
    return [write_atomic(out_dir / "eval_report.json", json.dumps(summary, indent=2) + "\n"), samples]


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise AccuracyError(f"samples file {path}: cannot read ({exc.strerror})") from exc


def _jobs(raw: bytes, path: Path, data: Dataset) -> list[Job]:
    jobs, seen = [], {}
    for lineno, line in enumerate(raw.decode(errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise AccuracyError(f"samples file {path} line {lineno}: not JSON ({exc})") from exc
        task = data.task(_field(record, "task_id", path, lineno))
        completion, solution = record.get("completion"), record.get("solution")
        if not isinstance(completion, str) and not isinstance(solution, str):
            raise AccuracyError(
                f"samples file {path} line {lineno}: needs a string 'completion' or 'solution' field"
            )
        sample = seen.get(task.task_id, 0)
        seen[task.task_id] = sample + 1
        program = program_for(task, completion=completion, solution=solution)
        jobs.append(Job(task, sample, program))
    if not jobs:
        raise AccuracyError(f"samples file {path}: no samples")
    return jobs


def _field(record: object, name: str, path: Path, lineno: int) -> str:
    if not isinstance(record, dict) or not isinstance(record.get(name), str):
        raise AccuracyError(f"samples file {path} line {lineno}: missing string field '{name}'")
    return record[name]
