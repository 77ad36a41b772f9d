"""How a long measurement reports progress, without knowing how (or whether) it is shown.

The core takes a `Bars` factory; the CLI supplies one that draws on the terminal, or writes a line a minute
to a log (`factsheet.cli.progress`); everything else passes `no_bars`. The estimate of the time left is
defined here, once, so the terminal's bars and the log's lines cannot disagree about how it is made.
"""

from __future__ import annotations

from collections.abc import Callable

Update = Callable[[int, int], None]  # update(done, total)
Bars = Callable[[str], Update | None]  # label -> an update, or None: no bar


def no_bars(label: str) -> None:
    return None


def time_left_s(done: int, total: int, elapsed_s: float) -> float | None:
    """Seconds left if the rest goes at the rate so far (done / elapsed): a linear extrapolation, which
    holds for a load point's requests, HumanEval+ tasks and a time budget alike. None before anything is
    done (no rate yet)."""
    if done <= 0 or elapsed_s <= 0:
        return None
    return elapsed_s * max(total - done, 0) / done


def duration(seconds: float) -> str:
    """'45 s', '3 min 05 s', '1 h 02 min': how a time left is written (whole seconds: an estimate)."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"
