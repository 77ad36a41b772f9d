"""The host's speed on each side of a diff (factsheet/compliance/host_speed.py): noted, never applied.

Known truth: kernel times set here; the ratio of the medians follows."""

from __future__ import annotations

import pytest

from factsheet.compliance.host_speed import host_note, host_ratio
from probes.hostload import HostLoad, HostSpeed


def _load(ms: float | None) -> HostLoad:
    speed = None if ms is None else HostSpeed(reference_ms=ms, fastest_ms=ms, slowest_ms=ms, rounds=15)
    return HostLoad(wall_s=60, cpus=2, utilisation=1.0, steal=0.0, tool=0.03, server=0.96, other=0.01,
                    busy=False, speed=speed)  # fmt: skip


def test_the_ratio_is_of_the_two_sides_medians():
    ratio = host_ratio([_load(8.0), _load(8.2), _load(7.9)], [_load(10.4), _load(10.0), _load(10.1)])
    assert ratio == pytest.approx(10.1 / 8.0)
    assert host_note(ratio, 3, 3) == [
        "host speed, noted and not applied: the candidate's reference kernel took 1.26× the baseline's "
        "(medians of 3 and 3 runs)"
    ]


def test_a_side_with_a_run_not_timed_says_nothing():
    assert host_ratio([_load(None), _load(8.0), _load(8.0)], [_load(10.0)] * 3) is None
    assert host_ratio([_load(8.0)] * 3, [None]) is None
    assert host_note(None, 3, 3) == []
