"""Progress bars on the terminal (rich): one bar per measurement, updated as requests complete.

Bars are shown only on an interactive terminal; in CI logs and pipes the line log is the record.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from probes.core.progress import Bars, Update, no_bars

__all__ = ["bars"]


@contextlib.contextmanager
def bars(console: Console) -> Iterator[Bars]:
    """A factory of bars drawn on `console` while the block runs; `no_bars` when it is not a terminal."""
    if not console.is_terminal:
        yield no_bars
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:

        def bar(label: str) -> Update:
            task = progress.add_task(label, total=None)
            return lambda done, total: progress.update(task, completed=done, total=total)

        yield bar
