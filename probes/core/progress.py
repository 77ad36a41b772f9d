"""How a long measurement reports progress, without knowing how (or whether) it is shown.

The core takes a `Bars` factory; the CLI supplies one that draws on the terminal
(`factsheet.progress`), everything else passes `no_bars`.
"""

from __future__ import annotations

from collections.abc import Callable

Update = Callable[[int, int], None]  # update(done, total)
Bars = Callable[[str], Update | None]  # label -> an update, or None: no bar


def no_bars(label: str) -> None:
    return None
