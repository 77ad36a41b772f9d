"""Judging one program on one task: run it in the sandbox, compare each output as it arrives.

The expected outputs come from running the canonical solution once in the same sandbox; they are
cached per dataset sha256 together with the canonical time per input (as the parent sees it: call,
encoding and transfer of the output), from which each input's deadline is derived, as EvalPlus does:
max(1 s, 4 x canonical time).
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from probes.accuracy import _runner
from probes.accuracy.compare import outputs_match
from probes.accuracy.dataset import Dataset, HumanEvalTask, cache_dir
from probes.accuracy.sandbox import Record, SandboxLimits, SandboxRun, decode_output
from probes.files import write_atomic
from probes.measurement import Model

# EvalPlus defaults (min 4 s, 4 × the canonical time): a 1 s floor failed correct code on a loaded host.
MIN_TIME_LIMIT_S = 4.0
TIME_LIMIT_FACTOR = 4.0
_CANONICAL_LIMIT_S = 60.0
_CHECK_LIMIT_S = 20.0
_CHECK_ENTRY = "__factsheet_check__"


class TestVerdict(Model):
    """Outcome of one test set (base or plus) for one sample."""

    status: Literal["pass", "fail", "not_run"]
    cause: str | None = Field(None, description="why it failed or was not run; None on pass")
    n_inputs: int = Field(ge=0, description="inputs in this test set")


class SampleVerdict(Model):
    task_id: str
    sample: int = Field(ge=0, description="index of the sample within its task")
    base: TestVerdict
    plus: TestVerdict = Field(description="HumanEval+ verdict: pass means base AND plus inputs all pass")
    seconds: float = Field(ge=0, description="wall-clock time of the sandbox run")


@dataclass(frozen=True)
class Expected:
    base: list
    plus: list
    base_seconds: list[float]
    plus_seconds: list[float]


def program_for(task: HumanEvalTask, *, completion: str | None = None, solution: str | None = None) -> str:
    """EvalPlus convention: a `completion` is appended to the prompt, a `solution` is the whole program."""
    if solution is not None:
        return solution
    return task.prompt + (completion or "")


def expected_outputs(dataset: Dataset, limits: SandboxLimits, *, concurrency: int = 2) -> dict[str, Expected]:
    """Canonical outputs and times for every task with inputs, from cache or computed and cached."""
    path = cache_dir() / f"expected-{dataset.info.sha256}.json.gz"
    if path.is_file():
        return _read_expected(path)
    tasks = [t for t in dataset.tasks if t.base_input is not None]
    with ThreadPoolExecutor(max(1, concurrency)) as pool:
        computed = dict(
            zip([t.task_id for t in tasks], pool.map(lambda t: _canonical(t, limits), tasks), strict=True)
        )
    _write_expected(path, computed)
    return computed


def _canonical(task: HumanEvalTask, limits: SandboxLimits) -> Expected:
    base, plus = task.base_input or [], task.plus_input or []
    inputs = base + plus
    run = SandboxRun(task.prompt + task.canonical_solution, task.entry_point, inputs, limits, cpu_s=600)
    outputs, seconds = [], []
    run.start()
    try:
        for record in run.records(_CANONICAL_LIMIT_S for _ in inputs):
            if record.kind != "R":
                raise RuntimeError(f"{task.task_id}: canonical solution failed in the sandbox: {record}")
            outputs.append(record.output)
            seconds.append(record.gap)
    finally:
        run.close()
    n = len(base)
    return Expected(outputs[:n], outputs[n:], seconds[:n], seconds[n:])


def _write_expected(path, computed: dict[str, Expected]) -> None:
    doc = {
        tid: {
            "base": [_runner._encode(v) for v in e.base],
            "plus": [_runner._encode(v) for v in e.plus],
            "base_seconds": e.base_seconds,
            "plus_seconds": e.plus_seconds,
        }
        for tid, e in computed.items()
    }
    # ~300 MB of JSON: one dump and the fastest gzip level (gzip's default 9 took 25 s, level 1 takes 1.5 s).
    write_atomic(path, gzip.compress(json.dumps(doc).encode(), compresslevel=1))


def _read_expected(path) -> dict[str, Expected]:
    with gzip.open(path, "rt") as fh:
        doc = json.load(fh)
    return {
        tid: Expected(
            [decode_output(v) for v in e["base"]],
            [decode_output(v) for v in e["plus"]],
            e["base_seconds"],
            e["plus_seconds"],
        )
        for tid, e in doc.items()
    }


def time_limits(seconds: list[float]) -> list[float]:
    return [max(MIN_TIME_LIMIT_S, TIME_LIMIT_FACTOR * t) for t in seconds]


def judge(
    task: HumanEvalTask, program: str, expected: Expected | None, limits: SandboxLimits, *, sample: int = 0
) -> tuple[SampleVerdict, list[str]]:
    """Verdicts for one program, and the isolation mechanisms the runner reported in force."""
    if expected is None:
        return _judge_by_check(task, program, limits, sample)
    base_in, plus_in = task.base_input or [], task.plus_input or []
    inputs = base_in + plus_in
    deadlines = time_limits(expected.base_seconds + expected.plus_seconds)
    cpu_s = math.ceil(sum(deadlines)) + 2
    run = SandboxRun(program, task.entry_point, inputs, limits, cpu_s=cpu_s)
    verdict_index, cause = _first_failure(run, task, inputs, expected.base + expected.plus, deadlines)
    n_base = len(base_in)
    base, plus = _split_verdicts(verdict_index, cause, n_base, len(plus_in))
    seconds = run.wall_seconds
    return SampleVerdict(
        task_id=task.task_id, sample=sample, base=base, plus=plus, seconds=seconds
    ), run.isolation


def _first_failure(
    run: SandboxRun, task: HumanEvalTask, inputs: list, expected: list, deadlines: list[float]
) -> tuple[int | None, str | None]:
    """Index of the first failing input (None if all pass) and why; stops the sandbox at once."""
    run.start()
    try:
        index = 0
        for record in run.records(iter(deadlines)):
            if index >= len(inputs):
                break
            problem = _problem(record, task, inputs[index], expected[index])
            if problem:
                return index, problem
            index += 1
        if index < len(inputs):
            return index, "sandbox produced no result"
        return None, None
    finally:
        run.close()


def _problem(record: Record, task: HumanEvalTask, args: list, expected: object) -> str | None:
    if record.kind == "R":
        if outputs_match(record.output, expected, atol=task.atol, entry_point=task.entry_point, args=args):
            return None
        return "wrong output"
    if record.kind == "E":
        return f"raised {record.message}"
    if record.kind == "X":
        return f"program failed to load: {record.message}"
    if record.kind == "D":
        return "runner reported done before all inputs (protocol violation)"
    return record.message


def _split_verdicts(
    index: int | None, cause: str | None, n_base: int, n_plus: int
) -> tuple[TestVerdict, TestVerdict]:
    if index is None:
        return TestVerdict(status="pass", n_inputs=n_base), TestVerdict(status="pass", n_inputs=n_plus)
    if index < n_base:
        base = TestVerdict(status="fail", cause=f"base input #{index}: {cause}", n_inputs=n_base)
        plus = TestVerdict(status="fail", cause="base tests failed", n_inputs=n_plus)
        return base, plus
    base = TestVerdict(status="pass", n_inputs=n_base)
    return base, TestVerdict(status="fail", cause=f"plus input #{index - n_base}: {cause}", n_inputs=n_plus)


def _judge_by_check(
    task: HumanEvalTask, program: str, limits: SandboxLimits, sample: int
) -> tuple[SampleVerdict, list[str]]:
    """Original HumanEval: the dataset's assert-based `check` runs in the sandbox (base tests only)."""
    harness = f"\n\n{task.test}\n\ndef {_CHECK_ENTRY}():\n    check({task.entry_point})\n    return True\n"
    check_task = task.model_copy(update={"entry_point": _CHECK_ENTRY, "atol": 0.0})
    run = SandboxRun(program + harness, _CHECK_ENTRY, [[]], limits, cpu_s=int(_CHECK_LIMIT_S) + 2)
    index, cause = _first_failure(run, check_task, [[]], [True], [_CHECK_LIMIT_S])
    base = TestVerdict(
        status="pass" if index is None else "fail",
        cause=None if index is None else f"check(): {cause}",
        n_inputs=1,
    )
    plus = TestVerdict(status="not_run", cause="dataset has no plus inputs", n_inputs=0)
    verdict = SampleVerdict(
        task_id=task.task_id, sample=sample, base=base, plus=plus, seconds=run.wall_seconds
    )
    return verdict, run.isolation


@dataclass(frozen=True)
class Job:
    task: HumanEvalTask
    sample: int
    program: str


def judge_many(
    jobs: list[Job],
    expected: dict[str, Expected],
    limits: SandboxLimits,
    *,
    concurrency: int,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[SampleVerdict], list[str]]:
    """Verdicts in job order, and the isolation mechanisms that were in force for every run."""
    done = 0

    def _one(job: Job) -> tuple[SampleVerdict, list[str]]:
        nonlocal done
        result = judge(job.task, job.program, expected.get(job.task.task_id), limits, sample=job.sample)
        done += 1  # single writer per finished job under the GIL; only feeds a progress display
        if progress:
            progress(done, len(jobs))
        return result

    with ThreadPoolExecutor(max(1, concurrency)) as pool:
        results = list(pool.map(_one, jobs))
    isolation = _common([iso for _, iso in results])
    return [verdict for verdict, _ in results], isolation


def _common(lists: list[list[str]]) -> list[str]:
    if not lists:
        return []
    shared = set(lists[0]).intersection(*map(set, lists[1:]))
    return [item for item in lists[0] if item in shared]
