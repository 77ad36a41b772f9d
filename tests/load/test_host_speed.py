"""The host's speed before a run (probes/hostload/speed.py): a reference kernel, timed.

Known truth: on one CPU, runnable processes share it fairly, so two busy loops pinned beside the kernel leave
it a third of the CPU it had alone, or a half of the half it had where one process already ran there (a busy
loop beside the suite, as the steadiness runs pin to a core): its time grows (e + 3) / (e + 1) times with e
such processes already there, 3× alone, 2× beside one, over 1.4× up to four. Whatever else the host runs
only ever adds to a timing, so the test compares the fewest milliseconds of each, taken in turns.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from probes.hostload import HostSpeed, host_speed

pytestmark = pytest.mark.system


def test_the_reference_kernel_states_its_rounds():
    speed = host_speed(rounds=5)
    assert isinstance(speed, HostSpeed) and speed.rounds == 5
    assert 0 < speed.fastest_ms <= speed.reference_ms <= speed.slowest_ms


def _kernel_on(cpu: int) -> float:
    """The kernel's median round in a process held to one CPU from its start, with one BLAS thread: every
    thread it runs is on that CPU (an affinity set later binds only the thread that sets it)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", "from probes.hostload import host_speed; print(host_speed().reference_ms)"],
        env=env, capture_output=True, text=True, check=True, timeout=120,
        preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),
    )  # fmt: skip
    return float(done.stdout)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_a_cpu_shared_with_two_busy_loops_times_the_kernel_longer():
    cpu = min(os.sched_getaffinity(0))
    alone = [_kernel_on(cpu)]
    shared = []
    for _ in range(2):
        busy = [
            subprocess.Popen(
                [sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.sched_setaffinity(0, {cpu})
            )
            for _ in range(2)
        ]
        try:
            shared.append(_kernel_on(cpu))
        finally:
            for loop in busy:
                loop.kill()
                loop.wait()
        alone.append(_kernel_on(cpu))
    # The fewest milliseconds of each: other work on the host only ever adds to a timing.
    assert min(shared) > 1.4 * min(alone), (alone, shared)
