"""The host's speed on each side of a diff: noted beside the runs compared, never applied to them.

Each run of a repeated confirmation step states the host's speed just before it (probes/hostload/speed.py: a
reference kernel timed in the tool's process between runs). A diff row compared on those runs says how the
candidate's kernel time stood to the baseline's (the medians of their runs), so a reader can see a host that
changed between builds. It does not scale the figures: in five demo rebuilds (bench/rebuilds_results.txt) the
kernel's build medians ran 8.1–10.2 ms while the deployment's TPOT p50 at 4 users ran 56–63 ms with no
relation between them (one build's kernel 18 % faster, its TPOT 1 % slower); timed beside a vLLM that still
wakes between requests, the kernel measures the server's idle work as much as the host, and comparing at the
baseline's host speed (one factor per side, past a 10 % dead band) gave 4 regressions in the 10 pairs, against 1
as measured.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from probes.hostload import HostLoad


def host_ratio(old: Sequence[HostLoad | None], new: Sequence[HostLoad | None]) -> float | None:
    """The candidate's median kernel time ÷ the baseline's over the runs compared; None where a run states no
    host speed (an older build)."""
    times_old = [x.speed.reference_ms for x in old if x is not None and x.speed is not None]
    times_new = [x.speed.reference_ms for x in new if x is not None and x.speed is not None]
    if not old or not new or len(times_old) != len(old) or len(times_new) != len(new):
        return None
    return statistics.median(times_new) / statistics.median(times_old)


def host_note(ratio: float | None, k_old: int, k_new: int) -> list[str]:
    """What a row compared on timed runs says of the host (nothing for an older build)."""
    if ratio is None:
        return []
    return [
        f"host speed, noted and not applied: the candidate's reference kernel took {ratio:.2f}× the baseline's "
        f"(medians of {k_new} and {k_old} runs)"
    ]
