"""Judging one program on one task: run it in the sandbox, compare each output as it arrives.

The expected outputs come from running the canonical solution once in the same sandbox; they are
cached per dataset sha256 together with the canonical time per input (as the parent sees it: call,
encoding and transfer of the output), from which each input's deadline is derived, as EvalPlus does:
max(4 s, 4 x canonical time). As in EvalPlus, base and plus inputs each run in a fresh process that
has min(60 s, sum of its inputs' limits) + 2 s in all, loading the program included. A time-out (the one
verdict a loaded host can cause) stands only when a fresh second run times out too.

Graded mode (`graded=True`) also counts the inputs passed, as EvalPlus's per-input details do with its
fast check off: a wrong output or an exception fails that input and the set goes on; base and plus each run
in a sandbox of their own, so a set that hangs does not keep the other from being counted. The verdicts are
the same as without it; the causes say more (where both sets fail, the plus cause also names the plus set's
own first problem; where counting stopped after that first problem, it names where). Where EvalPlus would
go on after an input's time limit, this judge cannot (the call is still running): the set's remaining
inputs count as not passed, so a share is a lower bound there (bench/humaneval_parity.py --graded measures
the counts against EvalPlus's). A set that met a time-out is graded again in a fresh sandbox, and that run
stands.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal, TypeVar

from pydantic import Field

from probes.accuracy import _runner
from probes.accuracy.compare import SetComparison
from probes.accuracy.dataset import Dataset, HumanEvalTask, cache_dir
from probes.accuracy.errors import SandboxStartError
from probes.accuracy.sandbox import SETUP_GRACE_S, Record, SandboxLimits, SandboxRun, decode_output
from probes.core.files import write_atomic
from probes.core.measurement import Model

# EvalPlus's defaults since 2025-04 (af49138; 0.3.1 had a 1 s floor, which failed correct code on a
# loaded host): min 4 s, 4 × the canonical time per input.
MIN_TIME_LIMIT_S = 4.0
TIME_LIMIT_FACTOR = 4.0
# EvalPlus: a test set's process gets min(EVALPLUS_TIMEOUT_PER_TASK = 60 s, sum of limits) + 1 s, and is
# joined 1 s more before it counts as timed out.
SET_TIME_CAP_S = 60.0
SET_GRACE_S = 2.0
# A record missing this close to the set's budget end is the budget's doing; earlier, the runner's (it died).
LATE_TOLERANCE_S = 0.05
_EXPECTED_FORMAT = 2  # bump when the cached expected outputs or times change meaning
_CANONICAL_LIMIT_S = 60.0
_CHECK_LIMIT_S = 20.0
_CHECK_ENTRY = "__factsheet_check__"


class TestVerdict(Model):
    """Outcome of one test set (base or plus) for one sample."""

    status: Literal["pass", "fail", "not_run"]
    cause: str | None = Field(None, description="why it failed or was not run; None on pass")
    n_inputs: int = Field(ge=0, description="inputs in this test set")
    n_passed: int | None = Field(
        None,
        ge=0,
        description="inputs passed (graded mode only; else None: judging stops at the first failure)",
    )


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


def expected_outputs(
    dataset: Dataset,
    limits: SandboxLimits,
    *,
    concurrency: int = 2,
    task_ids: list[str] | None = None,
) -> dict[str, Expected]:
    """Canonical outputs and times for every task with inputs (or only `task_ids`, cached apart: a subset
    need not read the whole dataset's ~300 MB), from cache or computed and cached."""
    key = dataset.info.sha256
    if task_ids is not None:
        key += "-" + hashlib.sha256("\n".join(sorted(task_ids)).encode()).hexdigest()[:16]
    path = cache_dir() / f"expected-v{_EXPECTED_FORMAT}-{key}.json.gz"
    if path.is_file():
        return _read_expected(path)
    wanted = None if task_ids is None else set(task_ids)
    tasks = [t for t in dataset.tasks if t.base_input is not None and (wanted is None or t.task_id in wanted)]
    with ThreadPoolExecutor(max(1, concurrency)) as pool:
        computed = dict(
            zip([t.task_id for t in tasks], pool.map(lambda t: _canonical(t, limits), tasks), strict=True)
        )
    _write_expected(path, computed)
    return computed


def _canonical(task: HumanEvalTask, limits: SandboxLimits) -> Expected:
    base, plus = task.base_input or [], task.plus_input or []
    program = task.prompt + task.canonical_solution
    run = SandboxRun(program, task.entry_point, [base, plus], limits, cpu_s=600)
    sets: list[tuple[list, list[float]]] = []
    try:
        _start(run, task)
        for inputs in (base, plus):
            kinds = ["L"] + ["R"] * len(inputs) + ["D", "C"]
            records = [run.next(_CANONICAL_LIMIT_S) for _ in kinds]
            if [r.kind for r in records] != kinds:
                bad = next(r for r, k in zip(records, kinds, strict=True) if r.kind != k)
                raise RuntimeError(f"{task.task_id}: canonical solution failed in the sandbox: {bad}")
            outputs = records[1 : 1 + len(inputs)]
            sets.append(([r.output for r in outputs], [r.gap for r in outputs]))
    finally:
        run.close()
    (base_out, base_s), (plus_out, plus_s) = sets
    return Expected(base_out, plus_out, base_s, plus_s)


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


def set_budget(deadlines: list[float]) -> float:
    """Seconds a test set's process has in all, from its start (EvalPlus's untrusted_check)."""
    return min(SET_TIME_CAP_S, sum(deadlines)) + SET_GRACE_S


def judge(
    task: HumanEvalTask,
    program: str,
    expected: Expected | None,
    limits: SandboxLimits,
    *,
    sample: int = 0,
    graded: bool = False,
) -> tuple[SampleVerdict, list[str]]:
    """Verdicts for one program, and the isolation mechanisms the runner reported in force; `graded`: also
    the inputs passed per set (`TestVerdict.n_passed`), same verdicts."""
    if expected is None:
        return _judge_by_check(task, program, limits, sample, graded)
    base_in, plus_in = task.base_input or [], task.plus_input or []
    sets = [
        _Set(base_in, expected.base, time_limits(expected.base_seconds)),
        _Set(plus_in, expected.plus, time_limits(expected.plus_seconds)),
    ]
    if graded:
        return _judge_graded(task, program, sets, limits, sample)
    cpu_s = math.ceil(max(set_budget(s.deadlines) for s in sets)) + 1

    def attempt() -> tuple[tuple[_Failure | None, SandboxRun], bool, float]:
        run = SandboxRun(program, task.entry_point, [s.inputs for s in sets], limits, cpu_s=cpu_s)
        failure = _first_failure(run, task, sets)
        return (failure, run), failure is not None and failure.timed_out, run.wall_seconds

    (failure, run), suffix, wall_s = _rerun_on_timeout(attempt)
    if suffix:
        failure = _Failure(failure.index, failure.why + suffix, True)
    base, plus = _split_verdicts(failure, len(base_in), len(plus_in))
    verdict = SampleVerdict(task_id=task.task_id, sample=sample, base=base, plus=plus, seconds=wall_s)
    return verdict, run.isolation


# A time-out is the one verdict the host's load can cause (a program stalled behind a busy server, not
# slow by itself): it stands only when a second, fresh run times out too. Programs that finish are judged
# on their first run, as EvalPlus judges them.
TIMEOUT_RUNS = 2
T = TypeVar("T")


def _rerun_on_timeout(attempt: Callable[[], tuple[T, bool, float]]) -> tuple[T, str, float]:
    """`attempt()` -> (result, timed out, wall seconds), run again while it times out, at most
    TIMEOUT_RUNS times: the last result, the suffix its cause gets when it timed out in every run
    (" (in N runs)", else ""), and the wall seconds of all runs."""
    wall_s, runs = 0.0, 0
    while True:
        runs += 1
        result, timed_out, seconds = attempt()
        wall_s += seconds
        if not timed_out or runs == TIMEOUT_RUNS:
            break
    return result, f" (in {runs} runs)" if timed_out and runs > 1 else "", wall_s


# A sandbox that does not come up ran no program: the host's failure, never a verdict. It is started again in a
# fresh process, and where it still does not come up the run stops (SandboxStartError), no pass rate stated.
START_TRIES = 2


def _start(run: SandboxRun, task: HumanEvalTask) -> None:
    """Start `run` and read its isolation header, in a fresh process again where it did not come up."""
    for _ in range(START_TRIES):
        run.start()
        if run.header():
            return
        run.close()
    raise SandboxStartError(
        f"{task.task_id}: the code-test sandbox did not start in {START_TRIES} tries ({SETUP_GRACE_S:g} s each): "
        "no program judged"
    )


@dataclass(frozen=True)
class _Failure:
    index: int  # the failing test set (0 base, 1 plus)
    why: str
    timed_out: bool


@dataclass(frozen=True)
class _Set:
    inputs: list
    expected: list
    deadlines: list[float]


def _judge_graded(
    task: HumanEvalTask, program: str, sets: list[_Set], limits: SandboxLimits, sample: int
) -> tuple[SampleVerdict, list[str]]:
    graded, isolation, seconds = [], [], 0.0
    for test_set in sets:
        cpu_s = math.ceil(set_budget(test_set.deadlines)) + 1
        # A set that met a time-out is graded again in a fresh sandbox, and the fresh run stands (as the
        # verdict's rule: a time-out counts only when a second run times out too).

        def attempt(test_set=test_set, cpu_s=cpu_s):
            run = SandboxRun(program, task.entry_point, [test_set.inputs], limits, cpu_s=cpu_s, graded=True)
            passed, why, timed_out = _grade_set(run, task, test_set)
            return (passed, why, run), timed_out, run.wall_seconds

        (passed, why, run), suffix, wall_s = _rerun_on_timeout(attempt)
        seconds += wall_s
        graded.append((passed, why + suffix if suffix else why))
        isolation.append(run.isolation)
    (base_ok, base_why), (plus_ok, plus_why) = graded
    failure = None
    if base_why is not None:
        failure = _Failure(0, base_why, False)
    elif plus_why is not None:
        failure = _Failure(1, plus_why, False)
    base, plus = _split_verdicts(failure, len(sets[0].inputs), len(sets[1].inputs))
    if base_why is not None and plus_why is not None:
        # Both sets were graded: the plus count's own first problem stays readable beside the verdict's.
        plus = plus.model_copy(update={"cause": f"{plus.cause}; plus {plus_why}"})
    verdict = SampleVerdict(
        task_id=task.task_id,
        sample=sample,
        base=base.model_copy(update={"n_passed": base_ok}),
        plus=plus.model_copy(update={"n_passed": plus_ok}),
        seconds=seconds,
    )
    return verdict, _common(isolation)


def _grade_set(run: SandboxRun, task: HumanEvalTask, test_set: _Set) -> tuple[int, str | None, bool]:
    """(inputs passed, the first problem or None, whether a time-out was met) for one set in its own
    sandbox."""
    timeouts: list[Record] = []
    try:
        _start(run, task)
        passed, why = _run_set(run, task, test_set, timeouts, graded=True)
        return passed, why, bool(timeouts)
    finally:
        run.close()


def _first_failure(run: SandboxRun, task: HumanEvalTask, sets: list[_Set]) -> _Failure | None:
    """The first set with a failure, None if every set passes; stops the sandbox at the first failure
    (a failed base makes plus a failure too, so plus is not run)."""
    try:
        _start(run, task)
        for index, test_set in enumerate(sets):
            timeouts: list[Record] = []
            problem = _run_set(run, task, test_set, timeouts)
            if problem:
                return _Failure(index, problem, bool(timeouts))
        return None
    finally:
        run.close()


def _run_set(
    run: SandboxRun,
    task: HumanEvalTask,
    test_set: _Set,
    timeouts: list[Record] | None = None,
    *,
    graded: bool = False,
):
    """The set's first problem, or None (graded: (inputs passed, first problem or None)); a time-out
    record met on the way is appended to `timeouts`."""
    budget = set_budget(test_set.deadlines)
    end = time.monotonic() + budget
    over = f"test set over its {budget:.3g} s budget (min({SET_TIME_CAP_S:g} s, sum of limits) + {SET_GRACE_S:g} s)"

    def _next(limit: float) -> Record:
        remaining = end - time.monotonic()
        record = run.next(min(limit, max(remaining, 0.0)))
        if record.kind == "K":
            if timeouts is not None:
                timeouts.append(record)
            if time.monotonic() >= end - LATE_TOLERANCE_S:  # an early exit or crash keeps its own cause
                record.message = over
        return record

    def _result(passed: int, problem: str | None):
        return (passed, problem) if graded else problem

    loaded = _next(budget)
    if loaded.kind != "L":
        return _result(0, _load_problem(loaded))
    compare = SetComparison(task.atol, task.entry_point)
    passed, first = 0, None
    for i, (args, want, limit) in enumerate(
        zip(test_set.inputs, test_set.expected, test_set.deadlines, strict=True)
    ):
        record = _next(limit)
        problem = _problem(record, compare, args, want)
        if problem is None:
            passed += 1
            continue
        here = f"input #{i}: {problem}"
        first = first or here
        # A wrong output or an exception fails this input only (graded); anything else (late, crashed)
        # leaves no process to ask about the rest, which then count as not passed (and the cause says where).
        if not graded or record.kind not in ("R", "E"):
            return _result(passed, first if first is here else f"{first}; counting stopped at {here}")
    done = _next(budget)
    if done.kind != "D":
        return _result(
            passed, first or f"after the last input: {_problem(done, compare, None, None) or 'no end of set'}"
        )
    ended = run.next(SETUP_GRACE_S)
    if ended.kind != "C":
        return _result(passed, first or f"set process did not end: {ended.message or ended.kind}")
    return _result(passed, first)


def _load_problem(record: Record) -> str:
    if record.kind == "X":
        return f"program failed to load: {record.message}"
    if record.kind == "C":
        return f"program ended ({record.message}) while loading"
    if record.kind == "K":
        return f"program did not load: {record.message}"
    return f"protocol violation while loading ({record.kind})"


def _problem(record: Record, compare: SetComparison, args: list | None, expected: object) -> str | None:
    if record.kind == "R":
        return None if compare(record.output, expected, args) else "wrong output"
    if record.kind == "E":
        return f"raised {record.message}"
    if record.kind == "C":
        return f"program's process ended ({record.message}) before returning"
    if record.kind in ("D", "L", "X"):
        return f"runner sent {record.kind} out of turn (protocol violation)"
    return record.message


def _split_verdicts(
    failure: tuple[int, str] | None, n_base: int, n_plus: int
) -> tuple[TestVerdict, TestVerdict]:
    if failure is None:
        return TestVerdict(status="pass", n_inputs=n_base), TestVerdict(status="pass", n_inputs=n_plus)
    index, cause = failure.index, failure.why
    if index == 0:
        base = TestVerdict(status="fail", cause=f"base {cause}", n_inputs=n_base)
        plus = TestVerdict(status="fail", cause="base tests failed", n_inputs=n_plus)
        return base, plus
    base = TestVerdict(status="pass", n_inputs=n_base)
    return base, TestVerdict(status="fail", cause=f"plus {cause}", n_inputs=n_plus)


def _judge_by_check(
    task: HumanEvalTask, program: str, limits: SandboxLimits, sample: int, graded: bool = False
) -> tuple[SampleVerdict, list[str]]:
    """Original HumanEval: the dataset's assert-based `check` runs in the sandbox (base tests only)."""
    harness = f"\n\n{task.test}\n\ndef {_CHECK_ENTRY}():\n    check({task.entry_point})\n    return True\n"
    check_task = task.model_copy(update={"entry_point": _CHECK_ENTRY, "atol": 0.0})
    run = SandboxRun(program + harness, _CHECK_ENTRY, [[[]]], limits, cpu_s=int(_CHECK_LIMIT_S) + 2)
    failure = _first_failure(run, check_task, [_Set([[]], [True], [_CHECK_LIMIT_S])])
    base = TestVerdict(
        status="pass" if failure is None else "fail",
        cause=None if failure is None else f"check(): {failure.why}",
        n_inputs=1,
        n_passed=(1 if failure is None else 0) if graded else None,
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
    graded: bool = False,
) -> tuple[list[SampleVerdict], list[str]]:
    """Verdicts in job order, and the isolation mechanisms that were in force for every run (`graded`: with
    the inputs passed per set)."""
    done = 0

    def _one(job: Job) -> tuple[SampleVerdict, list[str]]:
        nonlocal done
        result = judge(
            job.task, job.program, expected.get(job.task.task_id), limits, sample=job.sample, graded=graded
        )
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
