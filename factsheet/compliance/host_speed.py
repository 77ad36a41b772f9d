"""Between builds at equal host speed: the runs `factsheet diff` decides on, scaled by the host's own speed.

Each confirmation run and repeat states the host's speed just before it (probes/hostload/speed.py: a reference
kernel timed in the tool's process with the server idle). Where the server's process tree did the host's
CPU work over every such run on both sides (a CPU-served deployment: its every token computed on the CPU
the kernel times), a run's times are stated at the baseline's host speed: × (the baseline's median kernel time
÷ the run's own), and its goodput ÷ that factor; an SLO attainment is a share and is compared as measured. A
slower host then no longer reads as a slower deployment; the kernel runs outside the server, so a slower
deployment still does. A server on a GPU or another host is compared as measured, the ratio noted.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from probes.hostload import HostLoad

# The server's share of the host's CPU over a run from which its latencies are the host CPU's work.
CPU_BOUND = 0.5
# A candidate's host this much slower than the baseline's (medians of the kernel's time) is a slower host: the
# kernel's own timings on one idle host agree within 5 %.
SLOWER_HOST = 0.10
HOST_ADJUSTED_METHOD = (
    "at the baseline's host speed: each run's times × (the baseline's median reference-kernel time ÷ the "
    "run's own), goodput ÷ that factor, SLO attainment as measured; applied where the server's process tree "
    f"used ≥ {CPU_BOUND:.0%} of the host's CPU over every run compared (its work is the CPU's the kernel "
    "times)"
)


@dataclass(frozen=True)
class HostFactors:
    """Each run's factor onto the baseline's host speed (None: compared as measured), and what to say."""

    old: list[float] | None
    new: list[float] | None
    note: str


def host_factors(old: Sequence[HostLoad | None], new: Sequence[HostLoad | None]) -> HostFactors | None:
    """The factors for the runs of each side (the baseline's k repeats, the candidate's repeats or one run);
    None where a run states no host speed (an older build), so nothing is said."""
    loads = [*old, *new]
    if not old or not new or any(x is None or x.speed is None for x in loads):
        return None
    times_old = [x.speed.reference_ms for x in old if x is not None and x.speed is not None]
    times_new = [x.speed.reference_ms for x in new if x is not None and x.speed is not None]
    base = statistics.median(times_old)
    ratio = statistics.median(times_new) / base
    said = (
        f"host speed: the candidate's reference kernel took {ratio:.2f}× the baseline's (medians of "
        f"{len(times_new)} and {len(times_old)} runs)"
    )
    if any(x is None or x.server is None or x.server < CPU_BOUND for x in loads):
        return HostFactors(
            None, None, f"{said}; compared as measured: the server did not use ≥ {CPU_BOUND:.0%} of this "
            "host's CPU over every run (a GPU, or another host, does its work)",
        )  # fmt: skip
    return HostFactors(
        [base / t for t in times_old],
        [base / t for t in times_new],
        f"{said}; compared {HOST_ADJUSTED_METHOD}",
    )


def at_host_speed(figure: str, values: list[float], factors: list[float]) -> list[float]:
    """`values` of `figure`, one per run, at the baseline's host speed."""
    if figure == "slo_attainment":
        return values
    if figure == "goodput":
        return [v / f for v, f in zip(values, factors, strict=True)]
    return [v * f for v, f in zip(values, factors, strict=True)]


def host_ratio(old: Sequence[HostLoad | None], new: Sequence[HostLoad | None]) -> float | None:
    """The candidate's median kernel time ÷ the baseline's, where every run states one and the server did the
    host's CPU work over each (what a capacity, which no factor scales, is read beside); None otherwise."""
    loads = [*old, *new]
    if not old or not new or any(x is None or x.speed is None for x in loads):
        return None
    if any(x is None or x.server is None or x.server < CPU_BOUND for x in loads):
        return None
    times_old = [x.speed.reference_ms for x in old if x is not None and x.speed is not None]
    times_new = [x.speed.reference_ms for x in new if x is not None and x.speed is not None]
    return statistics.median(times_new) / statistics.median(times_old)
