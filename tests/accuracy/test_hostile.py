"""Hostile programs: each must fail and leave the host, the parent and other tasks untouched."""

import os
import socket
import textwrap
import threading
import time

import pytest

from probes.accuracy._runner import SANDBOX_UID_BASE
from probes.accuracy.harness import judge
from probes.accuracy.sandbox import SandboxLimits, SandboxRun
from tests.support.procs import running_where

pytestmark = pytest.mark.system

LIMITS = SandboxLimits()


def _judge_task0(small_tasks, small_expected, body: str):
    task = small_tasks.tasks[0]  # has_close_elements(numbers, threshold) -> bool
    program = "import os, sys, signal, socket, time\n" + textwrap.dedent(body)
    verdict, isolation = judge(task, program, small_expected[task.task_id], LIMITS)
    return verdict, isolation


def _canonical_still_passes(small_tasks, small_expected):
    task = small_tasks.tasks[1]
    verdict, _ = judge(task, task.prompt + task.canonical_solution, small_expected[task.task_id], LIMITS)
    assert verdict.plus.status == "pass"


HOSTILE = {
    "infinite_loop": "def has_close_elements(n, t):\n    while True:\n        pass\n",
    "ignore_sigalrm": """
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.setitimer(signal.ITIMER_REAL, 0)
        def has_close_elements(n, t):
            signal.alarm(0)
            while True:
                pass
        """,
    "memory_bomb": "def has_close_elements(n, t):\n    x = [bytearray(1 << 30) for _ in range(64)]\n    return True\n",
    "early_os_exit": "def has_close_elements(n, t):\n    os._exit(0)\n",
    "sys_exit_at_import": "sys.exit(0)\ndef has_close_elements(n, t):\n    return True\n",
    "kill_parent": "def has_close_elements(n, t):\n    os.kill(os.getppid(), 9)\n    os.kill(0, 9)\n    return True\n",
    "flood_stdout": "def has_close_elements(n, t):\n    while True:\n        sys.stdout.write('x' * 65536)\n",
    "always_equal": """
        class Liar:
            def __eq__(self, other):
                return True
            def __ne__(self, other):
                return False
        def has_close_elements(n, t):
            return Liar()
        """,
    "bool_subclass_lie": """
        class Lie(int):
            def __eq__(self, other):
                return True
        def has_close_elements(n, t):
            return Lie(7)
        """,
    "forge_result_pipe": """
        def has_close_elements(n, t):
            for fd in range(3, 64):
                try:
                    os.write(fd, b"R 0.0 true\\nR 0.0 true\\nD\\n")
                except OSError:
                    pass
            os._exit(0)
        """,
    "fork_bomb": """
        def has_close_elements(n, t):
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
        """,
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_program_fails_and_host_survives(name, small_tasks, small_expected):
    started = time.monotonic()
    verdict, _ = _judge_task0(small_tasks, small_expected, HOSTILE[name])
    assert verdict.base.status == "fail"
    assert verdict.plus.status == "fail"
    assert time.monotonic() - started < 30
    _canonical_still_passes(small_tasks, small_expected)


def test_forged_pipe_with_right_answers_is_not_a_pass_without_all_outputs(small_tasks, small_expected):
    # Writing "true" for every input can only pass if those are the right outputs; here they are not all.
    verdict, _ = _judge_task0(small_tasks, small_expected, HOSTILE["forge_result_pipe"])
    assert verdict.base.status == "fail"


def test_writing_outside_the_sandbox_is_prevented(small_tasks, small_expected, tmp_path):
    target = tmp_path / "escaped.txt"
    shared_tmp = f"/tmp/factsheet-escape-{time.time_ns()}.txt"
    body = f"""
        def has_close_elements(n, t):
            for path in ({str(target)!r}, {shared_tmp!r}):
                try:
                    with open(path, "w") as fh:
                        fh.write("pwned")
                except OSError:
                    pass
            return None
        """
    verdict, isolation = _judge_task0(small_tasks, small_expected, body)
    assert verdict.base.status == "fail"
    assert not target.exists()
    if any(i.startswith("mountns") for i in isolation):
        assert not __import__("os").path.exists(shared_tmp)


def test_network_is_unreachable(small_tasks, small_expected):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(5)
    port = listener.getsockname()[1]
    reached = threading.Event()

    def _accept():
        try:
            conn, _ = listener.accept()
            reached.set()
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=_accept, daemon=True)
    thread.start()
    body = f"""
        def has_close_elements(n, t):
            s = socket.create_connection(("127.0.0.1", {port}), timeout=2)
            s.sendall(b"leak")
            return False
        """
    verdict, isolation = _judge_task0(small_tasks, small_expected, body)
    thread.join(6)
    listener.close()
    assert verdict.base.status == "fail"
    if any(i.startswith("netns") for i in isolation):
        assert not reached.is_set()


def _recorded_uids(monkeypatch) -> list[int]:
    """The uid of each sandbox this test starts (SANDBOX_UID_BASE + its runner's pid), appended as it starts:
    other test workers' sandboxes run beside it under uids of their own."""
    uids: list[int] = []
    start = SandboxRun.start

    def recording(run: SandboxRun) -> None:
        start(run)
        uids.append(SANDBOX_UID_BASE + run._proc.pid)

    monkeypatch.setattr(SandboxRun, "start", recording)
    return uids


def _running_as(uids: list[int]) -> list[int]:
    """The running processes (zombies aside) whose uid is one of `uids`."""

    def owned(pid: int, _fields: list[str]) -> bool:
        try:
            return os.stat(f"/proc/{pid}").st_uid in uids
        except OSError:  # ended meanwhile
            return False

    return running_where(owned)


def test_fork_bomb_leaves_no_process_behind(small_tasks, small_expected, monkeypatch):
    uids = _recorded_uids(monkeypatch)
    _judge_task0(small_tasks, small_expected, HOSTILE["fork_bomb"])
    assert uids
    deadline = time.monotonic() + 10
    while True:
        alive = _running_as(uids)  # zombies await reaping by init: not counted
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert alive == []


@pytest.mark.skipif(os.geteuid() != 0, reason="RLIMIT_NPROC is applied under a uid of its own only as root")
def test_a_fork_bomb_leaves_a_concurrent_sandbox_its_processes(small_tasks, small_expected, monkeypatch):
    """RLIMIT_NPROC counts a user's processes host-wide: sandboxes sharing one user (nobody) gave a fork bomb's
    siblings no process to run their test sets in, and a canonical solution judged beside it failed to load.
    Each sandbox has a uid of its own: the canonical one passes while the bomb holds its limit's processes."""
    uids = _recorded_uids(monkeypatch)
    bomb = threading.Thread(target=_judge_task0, args=(small_tasks, small_expected, HOSTILE["fork_bomb"]))
    bomb.start()
    try:
        deadline = time.monotonic() + 30
        while len(_running_as(uids)) < LIMITS.processes and time.monotonic() < deadline:
            time.sleep(0.05)  # until the bomb has forked up to its limit
        assert len(_running_as(uids)) >= LIMITS.processes
        task = small_tasks.tasks[1]
        verdict, _ = judge(task, task.prompt + task.canonical_solution, small_expected[task.task_id], LIMITS)
    finally:
        bomb.join(120)
    assert (verdict.base.status, verdict.plus.status) == ("pass", "pass"), verdict


def test_isolation_reported_is_what_the_kernel_allowed(small_tasks, small_expected):
    _, isolation = _judge_task0(
        small_tasks, small_expected, "def has_close_elements(n, t):\n    return False\n"
    )
    assert any(i.startswith("rlimit address_space_bytes") for i in isolation)
    assert any(i.startswith("process:") for i in isolation)
