"""The host's speed before a run (probes/hostload/speed.py): a reference kernel, timed.

Known truth: on one CPU, a competing busy loop pinned to the same CPU takes half of it (the kernel's fair
share between two runnable processes), so the kernel's time about doubles; whatever else the host runs
touches both timings alike, so the test compares the two.
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


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_a_cpu_shared_with_a_busy_loop_times_the_kernel_about_twice_as_long():
    cpu = min(os.sched_getaffinity(0))
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    busy = None
    try:
        alone = host_speed().reference_ms
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        os.sched_setaffinity(busy.pid, {cpu})
        shared = host_speed().reference_ms
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
        os.sched_setaffinity(0, mine)
    assert shared > 1.4 * alone, (alone, shared)
