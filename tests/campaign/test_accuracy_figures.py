"""The campaign's accuracy figures against known truth: canonical solutions, empty programs, a plus-only bug
whose graded share is counted from the dataset by hand."""

import pytest

from probes.accuracy import AccuracyError
from tests.support.humaneval_path import DATASET
from tuner.campaign.accuracy import load_subset, measure_accuracy

IDS = ["HumanEval/0", "HumanEval/4"]


@pytest.fixture(scope="module")
def subset(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("FACTSHEET_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    try:
        yield load_subset(IDS, dataset=str(DATASET))
    finally:
        mp.undo()


def _fenced(code: str) -> str:
    return f"Here it is:\n```python\n{code}```\nDone."


def _replies(subset, program_of):
    by_id = {t.task_id: t for t in subset.tasks}
    seen = []

    def generate(task_id, prompt):
        seen.append((task_id, prompt))
        return _fenced(program_of(by_id[task_id]))

    return generate, seen


def test_subset_is_stated_and_in_dataset_order(subset):
    assert [t.task_id for t in subset.tasks] == IDS
    desc = subset.describe("chat")
    assert desc["task_ids"] == IDS and "2 listed tasks of 164" in desc["subset"]
    assert desc["benchmark"] == "HumanEval+" and desc["dataset_version"] == "v0.1.10"


def test_canonical_solutions_score_one(subset):
    generate, seen = _replies(subset, lambda t: t.prompt + t.canonical_solution)
    figures = measure_accuracy(subset, generate, mode="chat")
    assert {
        k: figures[k] for k in ("pass_at_1", "pass_at_1_base", "graded_base_share", "graded_plus_share")
    } == {
        "pass_at_1": 1.0,
        "pass_at_1_base": 1.0,
        "graded_base_share": 1.0,
        "graded_plus_share": 1.0,
    }
    assert figures["accuracy_tasks"] == 2 and figures["accuracy_generation_failures"] == 0
    # The probe's chat prompt: one user message carrying the task's prompt.
    task_id, messages = seen[0]
    assert messages[0]["role"] == "user" and subset.tasks[0].prompt.strip() in messages[0]["content"]


def test_empty_programs_and_failed_requests_score_zero(subset):
    figures = measure_accuracy(subset, lambda task_id, prompt: "", mode="chat")
    assert [
        figures[k] for k in ("pass_at_1", "pass_at_1_base", "graded_base_share", "graded_plus_share")
    ] == [0.0] * 4

    def half_broken(task_id, prompt):
        if task_id == "HumanEval/4":
            raise ConnectionError("server gone")
        return _canonical_body(subset, task_id)

    figures = measure_accuracy(subset, half_broken, mode="completion")
    assert figures["pass_at_1"] == 0.5 and figures["accuracy_generation_failures"] == 1

    def broken(task_id, prompt):
        raise ConnectionError("server gone")

    with pytest.raises(AccuracyError, match="every generation request failed.*server gone"):
        measure_accuracy(subset, broken, mode="completion")


def test_plus_only_bug_gives_the_hand_counted_share(subset):
    t0, t4 = subset.tasks
    guard = '    """\n    if len(numbers) > 10:\n        return -1.0\n'

    def program(task):
        if task.task_id == "HumanEval/4":
            return task.prompt.replace('    """\n', guard, 1) + task.canonical_solution
        return task.prompt + task.canonical_solution

    generate, _ = _replies(subset, program)
    figures = measure_accuracy(subset, generate, mode="chat")
    short = sum(len(args[0]) <= 10 for args in t4.plus_input)  # plus inputs the bug does not touch
    base_all = len(t0.base_input) + len(t4.base_input)
    plus_all = base_all + len(t0.plus_input) + len(t4.plus_input)
    assert figures["pass_at_1"] == 0.5 and figures["pass_at_1_base"] == 1.0
    assert figures["graded_base_share"] == 1.0
    assert figures["graded_plus_share"] == pytest.approx((base_all + len(t0.plus_input) + short) / plus_all)
    assert 0 < figures["graded_plus_share"] < 1


def test_completion_mode_appends_the_reply_to_the_prompt(subset):
    figures = measure_accuracy(subset, lambda tid, prompt: _canonical_body(subset, tid), mode="completion")
    assert figures["pass_at_1"] == 1.0


def _canonical_body(subset, task_id):
    return next(t.canonical_solution for t in subset.tasks if t.task_id == task_id)


def test_unknown_task_id_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(tmp_path))
    with pytest.raises(AccuracyError, match="HumanEval/999"):
        load_subset(["HumanEval/999"], dataset=str(DATASET))
