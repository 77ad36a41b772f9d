"""What every sub-command shares: the consoles that print data, --debug, and the mapping of failures to
exit codes."""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from factsheet.cli import signals
from factsheet.untrusted.reading import kind_of
from probes.core.errors import CheckFailed, InputError
from probes.core.untrusted.text import terminal_text


class Terminal(Console):
    """The one console every command prints through, and the one escaper of what it prints: a path, a name,
    a records file, a library's message is data. No rich markup is read in it (a path holding `[red]x[/red]`
    or a lone `[/x]` prints as it is: nothing removed, no MarkupError), no emoji codes, no highlighting; and
    every string is passed through `terminal_text`, so control and bidi characters (ESC, OSC, CSI, U+202E)
    are shown as their code points (`<U+001B>`), never sent (probes/core/untrusted/text.py, the pages'
    rule too). The tool's own styling is given as `Text` (`styled`). A line is never wrapped: a path in a
    log is copied from."""

    def __init__(self, **kwargs) -> None:
        super().__init__(markup=False, emoji=False, highlight=False, soft_wrap=True, **kwargs)

    def print(self, *objects, **kwargs) -> None:
        kwargs.pop("markup", None)  # never read markup in what is printed
        super().print(*(data(o) if isinstance(o, str) else o for o in objects), **kwargs)


err = Terminal(stderr=True)  # one error = one line
state = {"debug": False}


def data(text: str) -> Text:
    """`text` as the terminal shows data: controls and bidi as code points, no markup read (for a table's
    title or cell, which `Terminal.print` does not reach)."""
    return Text(terminal_text(text))


def styled(label: str, style: str, message: str) -> Text:
    """`label` in `style`, then `message` as data (shown by `Terminal.print`'s rule)."""
    return Text.assemble((label, style), " ", terminal_text(message))


def one_line(exc: BaseException | str) -> str:
    """Library messages (YAML, JSON) span lines; a CI log line must not. Printed through `Terminal`,
    which shows their control characters and reads no markup in them."""
    return terminal_text(" ".join(str(exc).split()))


def _refuse_special_files(values: list) -> None:
    """A path argument naming a FIFO, socket or device is bad input: reading a FIFO waits for a writer
    for ever and a device has no end, so it is refused by name before any work (files and folders pass)."""
    for value in values:
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str | Path) and str(item):
                try:
                    mode = os.stat(item).st_mode
                except (OSError, ValueError):
                    continue  # missing or unnamable: the command's own check names it
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    raise InputError(f"{item}: {kind_of(mode)}, not a regular file or folder")


def guarded(fn):
    """Map known failures to one clear line and an exit code; a traceback only with --debug."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            _refuse_special_files([*args, *kwargs.values()])
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except CheckFailed as exc:
            err.print(styled("check failed:", "red", one_line(exc)))
            raise typer.Exit(1) from None
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (signals.Terminated)
            # Files are written whole or not at all (probes.core.files), so whatever is there is usable.
            err.print("interrupted; files already written (measurements taken) are kept, none half-written")
            raise typer.Exit(signals.exit_code(exc)) from None
        except Exception as exc:
            if state["debug"]:
                raise
            if isinstance(exc, InputError):
                err.print(styled("error:", "red", one_line(exc)))
                raise typer.Exit(2) from None
            message = f"{type(exc).__name__}: {one_line(exc)} (rerun with --debug)"
            err.print(styled("internal error (a bug):", "red", message))
            raise typer.Exit(3) from None

    return wrapper
