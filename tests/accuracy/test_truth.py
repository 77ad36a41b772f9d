"""Known truth: canonical solutions pass, known-wrong ones fail; pass@k matches its closed form."""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from probes.accuracy import AccuracyError, evaluate_samples, write_eval_report
from probes.accuracy.dataset import HUMANEVALPLUS_SHA256, load_dataset
from probes.accuracy.harness import expected_outputs, judge, program_for
from probes.accuracy.passk import pass_at_k
from probes.accuracy.sandbox import SandboxLimits
from tests.support.humaneval_path import DATASET

pytestmark = pytest.mark.system


def test_small_canonical_pass_and_wrong_fail(small_tasks, small_expected):
    for task in small_tasks.tasks:
        good, _ = judge(
            task,
            program_for(task, completion=task.canonical_solution),
            small_expected[task.task_id],
            SandboxLimits(),
        )
        assert (good.base.status, good.plus.status) == ("pass", "pass"), good
    task = small_tasks.tasks[0]
    wrong, _ = judge(task, task.prompt + "    return False\n", small_expected[task.task_id], SandboxLimits())
    assert wrong.base.status == "fail" and wrong.base.cause.startswith("base input #")


def test_plus_only_bug_passes_base_fails_plus(small_tasks, small_expected):
    # HumanEval/4 MAD: returning 0.0 for a single element list equals canonical; returning a fixed
    # wrong value on long inputs is caught only by the larger plus inputs.
    task = small_tasks.tasks[4]
    body = task.canonical_solution + "\n"
    program = task.prompt.replace('    """\n', '    """\n    if len(numbers) > 10:\n        return -1.0\n', 1)
    program = program + body
    verdict, _ = judge(task, program, small_expected[task.task_id], SandboxLimits())
    assert verdict.base.status == "pass"
    assert verdict.plus.status == "fail" and verdict.plus.cause.startswith("plus input #")


def test_pinned_dataset_is_recognised():
    data = load_dataset(DATASET)
    assert data.info.sha256 == HUMANEVALPLUS_SHA256 and data.info.version == "v0.1.10"
    assert len(data.tasks) == 164 and data.info.tests == "base+plus"


def test_pass_at_k_closed_form():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(5, 0, 2) == 0.0
    assert pass_at_k(5, 4, 2) == 1.0
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)


def test_evaluate_samples_writes_verdicts(small_dataset, small_tasks, tmp_path):
    samples = tmp_path / "samples.jsonl"
    t0, t1 = small_tasks.tasks[0], small_tasks.tasks[1]
    samples.write_text(
        json.dumps({"task_id": t0.task_id, "completion": t0.canonical_solution})
        + "\n"
        + json.dumps({"task_id": t0.task_id, "completion": "    return True\n"})
        + "\n"
        + json.dumps({"task_id": t1.task_id, "solution": t1.prompt + t1.canonical_solution})
        + "\n"
    )
    report = evaluate_samples(samples, str(small_dataset))
    assert [v.plus.status for v in report.per_sample] == ["pass", "fail", "pass"]
    assert report.pass_rates.plus["pass@1"] == pytest.approx((0.5 + 1.0) / 2)
    paths = write_eval_report(report, tmp_path / "out")
    assert len((tmp_path / "out" / "eval_samples.jsonl").read_text().splitlines()) == 3
    assert all(p.exists() for p in paths)


def test_malformed_samples_name_the_line(small_dataset, tmp_path):
    samples = tmp_path / "bad.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": "x"}\n{"task_id": "HumanEval/0"}\n')
    with pytest.raises(AccuracyError, match="line 2"):
        evaluate_samples(samples, str(small_dataset))


def test_corrupt_dataset_is_rejected(tmp_path):
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b"\x1f\x8bnot gzip")
    with pytest.raises(AccuracyError, match="bad.jsonl.gz"):
        load_dataset(bad)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_all_164_canonical_solutions_pass_base_and_plus():
    data = load_dataset(DATASET)
    limits = SandboxLimits()
    expected = expected_outputs(data, limits)
    with ThreadPoolExecutor(2) as pool:
        verdicts = list(
            pool.map(
                lambda t: judge(
                    t, program_for(t, completion=t.canonical_solution), expected[t.task_id], limits
                )[0],
                data.tasks,
            )
        )
    failing = [(v.task_id, v.plus.cause) for v in verdicts if v.plus.status != "pass"]
    assert failing == []
