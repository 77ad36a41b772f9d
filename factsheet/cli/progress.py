"""Progress of long measurements, with the time left: bars on a terminal, a line a minute in a log.

On an interactive terminal each measurement gets a rich bar (done/total, elapsed, time left). Elsewhere
(CI logs, pipes, `make demo > log`) a bar draws nothing and instead writes one line at most every
`LOG_EVERY_S` seconds while it advances: done/total, elapsed and the time left, so a reader of a log
knows how long a step that takes minutes still needs. Both estimate the time left the one way
(`probes.core.progress.time_left_s`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from probes.core.progress import Bars, Update, duration, time_left_s
from probes.core.untrusted.text import terminal_text

__all__ = ["LOG_EVERY_S", "bars", "log_bars", "progress_line"]

# A line a minute: frequent enough that a stalled-looking log is never silent for long, rare enough
# that a 30-minute step writes 30 lines, not one per request.
LOG_EVERY_S = 60.0


def progress_line(label: str, done: int, total: int, elapsed_s: float) -> str:
    left = time_left_s(done, total, elapsed_s)
    eta = "time left not known yet (nothing done)" if left is None else f"about {duration(left)} left"
    return f"  {label}: {done}/{total} done, {duration(elapsed_s)} elapsed, {eta}"


def log_bars(
    log: Callable[[str], None], *, clock: Callable[[], float] = time.monotonic, every_s: float = LOG_EVERY_S
) -> Bars:
    """Bars that write `progress_line` through `log` when one advances and its last line (or its start)
    is at least `every_s` old by `clock`; a step shorter than that writes nothing."""

    def bar(label: str) -> Update:
        start = clock()
        last = [start]

        def update(done: int, total: int) -> None:
            now = clock()
            if now - last[0] >= every_s:
                last[0] = now
                log(progress_line(label, done, total, now - start))

        return update

    return bar


class _TimeLeft(ProgressColumn):
    """The time left by `time_left_s` (rich's own column averages a recent window: a second estimate)."""

    def render(self, task) -> Text:
        left = None
        if task.total is not None and task.elapsed is not None:
            left = time_left_s(int(task.completed), int(task.total), task.elapsed)
        return Text("left -:--:--" if left is None else f"left {duration(left)}", style="progress.remaining")


@contextlib.contextmanager
def bars(console: Console, *, clock: Callable[[], float] = time.monotonic) -> Iterator[Bars]:
    """A factory of bars drawn on `console` while the block runs; off a terminal, `log_bars` on it."""
    if not console.is_terminal:
        # One line per entry however narrow the log: no wrapping, no markup read into a label.
        yield log_bars(
            lambda line: console.print(line, highlight=False, markup=False, soft_wrap=True), clock=clock
        )
        return
    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        _TimeLeft(),
    )
    with Progress(*columns, console=console, get_time=clock) as progress:

        def bar(label: str) -> Update:
            task = progress.add_task(terminal_text(label), total=None)
            return lambda done, total: progress.update(task, completed=done, total=total)

        yield bar
