"""Graded judging: the inputs passed per set, counted against the dataset itself; verdicts unchanged."""

import pytest

from probes.accuracy import harness
from probes.accuracy.harness import judge, program_for
from probes.accuracy.sandbox import SandboxLimits

pytestmark = pytest.mark.system

# HumanEval/4 (mean absolute deviation): every base input has at most 5 numbers; a program that is wrong
# only on longer lists passes base and fails exactly the plus inputs longer than 10.
_GUARD = '    """\n    if len(numbers) > 10:\n{}\n'


def _mad_with(small_tasks, guard_body: str) -> tuple:
    task = small_tasks.tasks[4]
    program = task.prompt.replace('    """\n', _GUARD.format(guard_body), 1) + task.canonical_solution + "\n"
    return task, program


def _short(inputs) -> int:
    return sum(len(args[0]) <= 10 for args in inputs)


@pytest.mark.parametrize(
    "guard_body",
    ["        return -1.0", "        raise ValueError('long')"],
    ids=["wrong-output", "raises"],
)
def test_plus_only_bug_counts_the_inputs_it_passes(small_tasks, small_expected, guard_body):
    task, program = _mad_with(small_tasks, guard_body)
    expected = small_expected[task.task_id]
    graded, _ = judge(task, program, expected, SandboxLimits(), graded=True)
    fast, _ = judge(task, program, expected, SandboxLimits())
    assert max(len(a[0]) for a in task.base_input) <= 10
    assert (graded.base.status, graded.base.n_passed) == ("pass", len(task.base_input))
    assert graded.plus.status == "fail" and graded.plus.n_passed == _short(task.plus_input)
    assert 0 < graded.plus.n_passed < len(task.plus_input)
    # Same verdicts and first cause as the judge that stops at the first failure.
    assert (graded.base.status, graded.plus.status, graded.plus.cause) == (
        fast.base.status,
        fast.plus.status,
        fast.plus.cause,
    )
    assert fast.plus.n_passed is None


def test_canonical_passes_every_input_and_wrong_passes_none(small_tasks, small_expected):
    task = small_tasks.tasks[0]
    good, _ = judge(
        task, program_for(task, completion=task.canonical_solution), small_expected[task.task_id],
        SandboxLimits(), graded=True,
    )  # fmt: skip
    assert (good.base.n_passed, good.plus.n_passed) == (len(task.base_input), len(task.plus_input))
    assert (good.base.status, good.plus.status) == ("pass", "pass")
    empty, _ = judge(task, "", small_expected[task.task_id], SandboxLimits(), graded=True)
    assert (empty.base.n_passed, empty.plus.n_passed) == (0, 0)
    assert empty.base.cause.startswith("base program failed to load")


def test_a_hang_counts_the_inputs_before_it_and_not_the_rest(small_tasks, small_expected):
    # Wrong on the first plus input, then hangs on the first long list: the count stops at the hang, and
    # the cause names both the first problem and where counting stopped.
    task = small_tasks.tasks[4]
    first = task.plus_input[0][0]
    hang = f"    if numbers == {first!r}:\n        return -1.0\n    if len(numbers) > 10:\n        __import__('time').sleep(100)\n"
    program = task.prompt + hang + task.canonical_solution + "\n"
    graded, _ = judge(task, program, small_expected[task.task_id], SandboxLimits(), graded=True)
    before = next(i for i, args in enumerate(task.plus_input) if len(args[0]) > 10)
    wrong = sum(args[0] == first for args in task.plus_input[:before])
    assert graded.base.n_passed == len(task.base_input)
    assert graded.plus.n_passed == before - wrong
    assert graded.plus.cause.startswith(f"plus input #0: wrong output; counting stopped at input #{before}: ")
    assert "no result within" in graded.plus.cause
    assert graded.plus.cause.endswith("(in 2 runs)")  # a time-out stands only when a fresh run times out too


def test_both_sets_failing_keep_the_plus_sets_own_problem(small_tasks, small_expected):
    task, program = _mad_with(
        small_tasks, "        return -1.0\n    if numbers == [1.0, 2.0, 3.0]:\n        return 0.0"
    )
    assert task.base_input[0] == [[1.0, 2.0, 3.0]]
    graded, _ = judge(task, program, small_expected[task.task_id], SandboxLimits(), graded=True)
    fast, _ = judge(task, program, small_expected[task.task_id], SandboxLimits())
    assert (graded.base.n_passed, graded.base.cause) == (
        len(task.base_input) - 1,
        "base input #0: wrong output",
    )
    first_long = next(i for i, args in enumerate(task.plus_input) if len(args[0]) > 10)
    assert graded.plus.cause == f"base tests failed; plus input #{first_long}: wrong output"
    assert fast.plus.cause == "base tests failed" and fast.base.cause == graded.base.cause


def test_a_set_stalled_by_the_host_is_graded_again(small_tasks, small_expected, monkeypatch):
    real, calls = harness._grade_set, []

    def stalled_once(run, task, test_set):
        calls.append(1)
        return (0, "input #0: no result within 4 s", True) if len(calls) == 1 else real(run, task, test_set)

    monkeypatch.setattr(harness, "_grade_set", stalled_once)
    task = small_tasks.tasks[0]
    program = program_for(task, completion=task.canonical_solution)
    graded, _ = judge(task, program, small_expected[task.task_id], SandboxLimits(), graded=True)
    assert len(calls) == 3  # base twice (the stalled run and its fresh re-run), plus once
    assert (graded.base.status, graded.base.n_passed) == ("pass", len(task.base_input))
