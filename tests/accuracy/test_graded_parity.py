"""Graded parity (bench/humaneval_parity.py --graded): how a count is read from EvalPlus's --test-details
results, and how it is compared with our graded judge's, on programs whose counts are known."""

import json

import pytest

from bench.humaneval_graded import (
    EVALPLUS_TIMED_OUT,
    PER_INPUT_TIME_OUT,
    compare_counts,
    reference_count,
)
from probes.accuracy.harness import SampleVerdict, judge
from probes.accuracy.harness import TestVerdict as SetVerdict  # not a test class
from probes.accuracy.sandbox import SandboxLimits

pytestmark = pytest.mark.system

# HumanEval/4 (mean absolute deviation) wrong only on lists longer than 10: every base input is shorter,
# so it passes base and fails exactly the plus inputs longer than 10 (in v0.1.10, 345 of 785; EvalPlus 0.3.1
# --test-details lists those 345 as plus_fail_tests).
_GUARD = '    """\n    if len(numbers) > 10:\n        return -1.0\n'


def _record(base_status, plus_status, base_failed=(), plus_failed=()) -> dict:
    """One sample's record as `evalplus.evaluate --test-details` writes it in <samples>_eval_results.json."""
    return {
        "task_id": "HumanEval/4",
        "solution": "...",
        "base_status": base_status,
        "plus_status": plus_status,
        "base_fail_tests": list(base_failed),
        "plus_fail_tests": list(plus_failed),
    }


def test_each_status_reads_as_evalplus_writes_it():
    assert (reference_count("pass", [], 7).low, reference_count("pass", [], 7).exact) == (7, True)
    assert str(reference_count("fail", [[1], [2]], 7)) == "5"  # worker went through all: 7 - 2 listed
    assert str(reference_count("fail", [], 7)) == "0"  # nothing listed on a failure: did not load
    ranged = reference_count("timeout", [[1]], 7)  # killed: failures among the reached, reached unknown
    assert (ranged.low, ranged.high, ranged.exact) == (0, 6, False)
    for bad in [("pass", [[1]], 7), ("fail", [[1]] * 8, 7), ("crashed", [], 7)]:
        with pytest.raises(ValueError):
            reference_count(*bad)


def test_canonical_counts_every_input_in_both(small_tasks, small_expected):
    task = small_tasks.tasks[0]
    ours, _ = judge(
        task,
        task.prompt + task.canonical_solution,
        small_expected[task.task_id],
        SandboxLimits(),
        graded=True,
    )
    base, plus = compare_counts(ours, _record("pass", "pass"))
    assert (base.outcome, plus.outcome) == ("agree", "agree")
    assert (base.ours, plus.ours) == (len(task.base_input), len(task.plus_input))


def test_plus_only_bug_counts_agree_with_the_dataset(small_tasks, small_expected):
    task = small_tasks.tasks[4]
    program = task.prompt.replace('    """\n', _GUARD, 1) + task.canonical_solution + "\n"
    ours, _ = judge(task, program, small_expected[task.task_id], SandboxLimits(), graded=True)
    long_lists = [args for args in task.plus_input if len(args[0]) > 10]
    assert 0 < len(long_lists) < len(task.plus_input)
    base, plus = compare_counts(ours, _record("pass", "fail", plus_failed=long_lists))
    assert (base.outcome, plus.outcome) == ("agree", "agree")
    assert plus.ours == plus.reference.low == len(task.plus_input) - len(long_lists)
    # A count one off is a disagreement, unexplained unless a known difference is given.
    _, off = compare_counts(ours, _record("pass", "fail", plus_failed=long_lists[1:]))
    assert (off.outcome, off.reason, off.explained) == ("disagree", None, False)
    _, known = compare_counts(ours, _record("pass", "fail", plus_failed=long_lists[1:]), "a known defect")
    assert (known.reason, known.explained) == ("a known defect", True)


def _verdict(base: SetVerdict, plus: SetVerdict) -> SampleVerdict:
    return SampleVerdict(task_id="HumanEval/4", sample=0, base=base, plus=plus, seconds=1.0)


_LATE = "input #102: no result within 4 s (timeout, crash, early exit or output cap) (in 2 runs)"


@pytest.mark.parametrize(
    "plus_cause",
    [f"plus {_LATE}", f"base tests failed; plus input #0: wrong output; counting stopped at {_LATE}"],
    ids=["stopped-at-first-problem", "stopped-after-a-wrong-output"],
)
def test_a_per_input_time_out_is_named_and_a_killed_set_is_a_range(plus_cause):
    # Our count stops at a late input (the call cannot be interrupted); EvalPlus's SIGALRM lets it go on.
    base = SetVerdict(status="pass", n_inputs=3, n_passed=3)
    plus = SetVerdict(status="fail", cause=plus_cause, n_inputs=785, n_passed=102)
    failed = [[[0.0] * 11]] * 345
    _, row = compare_counts(_verdict(base, plus), _record("pass", "fail", plus_failed=failed))
    assert (row.outcome, row.reason, row.explained) == ("disagree", PER_INPUT_TIME_OUT, True)
    # EvalPlus's set killed at its budget: its count is only a range, and ours lies in it.
    _, row = compare_counts(_verdict(base, plus), _record("pass", "timeout", plus_failed=failed[:10]))
    assert (row.outcome, row.reason, str(row.reference)) == ("within range", EVALPLUS_TIMED_OUT, "0–775")


def test_a_lower_count_without_a_time_out_is_unexplained():
    base = SetVerdict(status="fail", cause="base input #0: wrong output", n_inputs=3, n_passed=2)
    plus = SetVerdict(status="fail", cause="base tests failed", n_inputs=785, n_passed=785)
    row, plus_row = compare_counts(_verdict(base, plus), _record("pass", "pass"))
    assert (row.outcome, row.reason, row.explained) == ("disagree", None, False)
    assert plus_row.outcome == "agree" and plus_row.ours_cause is None  # plus had no problem of its own
    ungraded = _verdict(base, plus.model_copy(update={"n_passed": None}))
    with pytest.raises(ValueError, match="graded"):
        compare_counts(ungraded, _record("pass", "pass"))


def test_report_counts_agreement_over_the_samples_counted():
    from bench.humaneval_graded import graded_report

    class S:  # a bench Sample's fields the report reads
        def __init__(self, set_name, correct=True, note=""):
            self.set_name, self.task_id, self.label = set_name, "HumanEval/4", "p"
            self.reference_correct, self.note = correct, note

    full = _verdict(
        SetVerdict(status="pass", n_inputs=3, n_passed=3), SetVerdict(status="pass", n_inputs=5, n_passed=5)
    )
    late = _verdict(
        SetVerdict(status="pass", n_inputs=3, n_passed=3),
        SetVerdict(status="fail", cause=f"plus {_LATE}", n_inputs=5, n_passed=1),
    )
    samples = [S("canonical"), S("canonical", False, "a reference defect"), S("chat"), S("chat")]
    samples[3].count_note = "compared in-process"  # a right verdict, a count known to differ
    records = [
        _record("pass", "pass"),
        _record("fail", "fail"),
        _record("pass", "timeout", plus_failed=[[1]]),
        _record("pass", "fail", plus_failed=[[1]] * 2),
    ]
    ours = [
        full,
        full,
        late,
        _verdict(full.base, late.plus.model_copy(update={"cause": "plus input #1: wrong output"})),
    ]
    text = graded_report(samples, ours, records, ["# title"], [], {"date": "d", "reference": "r"})
    line = next(x for x in text.splitlines() if x.startswith("GRADED_PARITY_RECORD "))
    assert json.loads(line.removeprefix("GRADED_PARITY_RECORD ")) == {
        "date": "d",
        "reference": "r",
        "samples": 4,
        "samples_counted": 3,
        "counts": 6,
        "counts_agreeing": 4,
        "counts_within_range": 1,
        "counts_per_input_time_out": 0,
        "counts_known_difference": 1,
        "counts_unexplained": 0,
    }
    assert "| canonical | 1 of 2 | 1/1 | 1/1 | 0 | 0 | 0 | 0 | 3 / 3 of 3 (100.0% / 100.0%) |" in text
    assert "| chat | HumanEval/4 | p | plus | 1 / 0–4 (timeout) | 5 | within range |" in text
    assert "| chat | HumanEval/4 | p | plus | 1 / 3 (fail) | 5 | disagree | compared in-process;" in text
    assert (
        "| canonical | HumanEval/4 | p | base | 3 / 0 (fail) | 3 | disagree (left out) | a reference defect"
        in text
    )
