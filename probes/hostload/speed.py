"""How fast the host's CPU was just before a run: a fixed reference kernel, timed.

Two builds of one deployment on one virtual machine can differ by a quarter in every latency with no other
process in sight (five demo rebuilds: TPOT p50 at concurrency 4 from 56 to 70 ms, steal and other processes
under 1 %): a neighbour on the physical host takes memory bandwidth or cache, or the clock changes. Nothing in
/proc says so. A kernel that does the same work every time, timed in the tool's process between runs, is
meant to: `factsheet diff` states it beside the runs it compares (factsheet/compliance/host_speed.py), and does
not apply it: beside a vLLM that still wakes between requests, five rebuilds' kernel times did not follow the
deployment's speed (bench/rebuilds_results.txt).

The kernel: a 256 × 256 float32 matrix product twenty times (compute, as a model's layers are) and a sum over
a 64 MiB array (memory bandwidth beyond any cache, as a decode step reading every weight is), timed together;
after 0.3 s of untimed rounds (an idle CPU's first rounds ran up to 40 % slower), fifteen
rounds, their median stated with the fastest and slowest (consecutive timings on an idle host: within 5 %).
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from pydantic import Field

from probes.core.measurement import Model

ROUNDS = 15
# A CPU idle a moment before runs its first rounds slower (clock and cache): rounds before the timed ones, this long.
WARM_UP_S = 0.3
_MATRIX = 256
_PRODUCTS = 20
_SWEEP_BYTES = 64 * 1024 * 1024
HOST_SPEED_METHOD = (
    f"the tool's process, between runs (no request in flight), just before the run: {WARM_UP_S:g} s untimed, then {ROUNDS} rounds of one reference kernel "
    f"({_PRODUCTS} products of two {_MATRIX} × {_MATRIX} float32 matrices, then one sum over a "
    f"{_SWEEP_BYTES // 2**20} MiB float32 array), wall clock per round; the median stated"
)


class HostSpeed(Model):
    """The reference kernel's time on this host just before one run: larger is a slower host."""

    reference_ms: float = Field(gt=0, description="the median round of the reference kernel, ms")
    fastest_ms: float = Field(gt=0, description="the fastest round, ms")
    slowest_ms: float = Field(gt=0, description="the slowest round, ms")
    rounds: int = Field(ge=1, description="rounds timed")
    method: str = HOST_SPEED_METHOD


def _operands() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((_MATRIX, _MATRIX), dtype=np.float32)
    b = rng.standard_normal((_MATRIX, _MATRIX), dtype=np.float32)
    return a, b, np.ones(_SWEEP_BYTES // 4, dtype=np.float32)


def _round(a: np.ndarray, b: np.ndarray, sweep: np.ndarray) -> float:
    began = time.perf_counter()
    for _ in range(_PRODUCTS):
        a @ b
    sweep.sum()
    return (time.perf_counter() - began) * 1000


def host_speed(rounds: int = ROUNDS) -> HostSpeed:
    """Time the reference kernel `rounds` times (after WARM_UP_S of untimed ones).
    Its 64 MiB are allocated here and freed on return: a build holds them only while it times."""
    a, b, sweep = _operands()
    end = time.perf_counter() + WARM_UP_S
    while time.perf_counter() < end:
        _round(a, b, sweep)
    times = [_round(a, b, sweep) for _ in range(rounds)]
    return HostSpeed(
        reference_ms=round(statistics.median(times), 3), fastest_ms=round(min(times), 3),
        slowest_ms=round(max(times), 3), rounds=rounds,
    )  # fmt: skip
