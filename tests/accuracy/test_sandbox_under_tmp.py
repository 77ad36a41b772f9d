"""The judge runs from an interpreter whose packages live under /tmp (a checkout or CI build there).

The sandbox mounts a private empty tmpfs over /tmp; the candidate must still import what the interpreter
has installed there, or a correct program that imports numpy is judged a failure."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy
import pytest

from probes.accuracy.harness import judge
from probes.accuracy.sandbox import SandboxLimits

pytestmark = pytest.mark.system


@pytest.fixture(scope="module")
def tmp_venv_python():
    """A venv under /tmp itself (not $TMPDIR) holding its own copy of numpy: nothing it imports comes
    from outside /tmp except the standard library."""
    root = Path(tempfile.mkdtemp(prefix="factsheet-venv-", dir="/tmp"))
    try:
        venv = root / "venv"
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        site = subprocess.run(
            [str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        source = Path(numpy.__file__).parent
        for name in ("numpy", "numpy.libs"):
            if (source.parent / name).is_dir():
                shutil.copytree(source.parent / name, Path(site) / name, symlinks=True)
        where = subprocess.run(
            [str(python), "-I", "-c", "import numpy; print(numpy.__file__)"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        assert where.startswith(str(root) + "/")  # the copy under /tmp is what the venv imports
        yield str(python)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize(
    "ret",
    [
        "number - int(number)",
        "numpy.float64(number - int(number))",
        "float(numpy.modf(number)[0])",
    ],
)
def test_a_correct_numpy_program_passes_from_a_venv_under_tmp(
    small_tasks, small_expected, tmp_venv_python, monkeypatch, ret
):
    task = small_tasks.tasks[2]  # truncate_number
    monkeypatch.setattr(sys, "executable", tmp_venv_python)  # the sandbox starts its runner with it
    program = "import numpy\n" + task.prompt + f"    return {ret}\n"
    verdict, isolation = judge(task, program, small_expected[task.task_id], SandboxLimits())
    assert (verdict.base.status, verdict.plus.status) == ("pass", "pass"), verdict.base.cause
    # The private /tmp was in force (the case this pins): the interpreter's packages stayed visible.
    assert any(line.startswith("mountns") for line in isolation) or os.geteuid() != 0


def test_the_interpreter_dirs_under_tmp_are_read_only_to_the_candidate(
    small_tasks, small_expected, tmp_venv_python, monkeypatch
):
    task = small_tasks.tasks[2]
    monkeypatch.setattr(sys, "executable", tmp_venv_python)
    # Correct only if writing next to the venv's numpy is refused: visible, but not the candidate's to change.
    program = (
        "import os, numpy\n"
        "try:\n"
        "    open(os.path.join(os.path.dirname(numpy.__file__), 'planted.py'), 'w').close()\n"
        "    WROTE = True\n"
        "except OSError:\n"
        "    WROTE = False\n" + task.prompt + "    return 0.0 if WROTE else number - int(number)\n"
    )
    verdict, isolation = judge(task, program, small_expected[task.task_id], SandboxLimits())
    if not any(line.startswith("mountns") for line in isolation):
        pytest.skip("no private mount namespace here")
    assert verdict.base.status == "pass", verdict.base.cause
    assert not list(Path(tmp_venv_python).parent.parent.rglob("planted.py"))
