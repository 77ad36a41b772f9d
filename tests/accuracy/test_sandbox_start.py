"""A code-test sandbox that does not come up ran no program: it is started again, and where it still does not
come up no verdict is given (SandboxStartError, exit 2), never a failure that lowers pass@1."""

import pytest

from probes.accuracy import harness, sandbox
from probes.accuracy.errors import SandboxStartError
from probes.accuracy.harness import judge, program_for
from probes.accuracy.sandbox import SandboxLimits, SandboxRun

pytestmark = pytest.mark.system


@pytest.mark.parametrize("graded", [False, True], ids=["first-failure", "graded"])
def test_a_sandbox_that_never_comes_up_gives_no_verdict(small_tasks, small_expected, monkeypatch, graded):
    task = small_tasks.tasks[0]
    monkeypatch.setattr(sandbox, "SETUP_GRACE_S", 0.0)  # no sandbox is up within no time
    with pytest.raises(
        SandboxStartError, match=f"{task.task_id}: the code-test sandbox did not start in 2 tries"
    ):
        judge(task, program_for(task, completion=task.canonical_solution), small_expected[task.task_id],
              SandboxLimits(), graded=graded)  # fmt: skip


@pytest.mark.parametrize("graded", [False, True], ids=["first-failure", "graded"])
def test_a_sandbox_lost_once_is_started_again_and_judges(small_tasks, small_expected, monkeypatch, graded):
    task = small_tasks.tasks[0]
    real, calls = SandboxRun.header, []

    def lost_first(run: SandboxRun) -> bool:
        calls.append(run)
        return False if len(calls) == 1 else real(run)

    monkeypatch.setattr(SandboxRun, "header", lost_first)
    verdict, isolation = judge(task, program_for(task, completion=task.canonical_solution),
                               small_expected[task.task_id], SandboxLimits(), graded=graded)  # fmt: skip
    assert (verdict.base.status, verdict.plus.status) == ("pass", "pass")
    # the lost start, then the sandbox (graded: one a set; a set that met a time-out on a busy host runs again)
    assert calls[0] is calls[1] and len(calls) >= (3 if graded else 2) and harness.START_TRIES == 2
    assert isolation
