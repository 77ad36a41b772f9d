"""What every sub-command shares: the error console, --debug, and the mapping of failures to exit codes."""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from factsheet.cli import signals
from factsheet.export.text import terminal_text
from factsheet.untrusted.reading import kind_of
from probes.core.errors import CheckFailed, InputError

err = Console(stderr=True, soft_wrap=True)  # one error = one line, never wrapped
state = {"debug": False}


def one_line(exc: BaseException | str) -> str:
    """Library messages (YAML, JSON) span lines; a CI log line must not, and markup in them is text.
    Control and bidi characters (a hostile name, an escape sequence from a server's page) are shown as
    their code points, never sent to the terminal (factsheet/export/text.py, the pages' rule too)."""
    return escape(terminal_text(" ".join(str(exc).split())))


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
            err.print(f"[red]check failed:[/red] {one_line(exc)}", highlight=False)
            raise typer.Exit(1) from None
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (signals.Terminated)
            # Files are written whole or not at all (probes.core.files), so whatever is there is usable.
            err.print("interrupted; files already written (measurements taken) are kept, none half-written")
            raise typer.Exit(signals.exit_code(exc)) from None
        except Exception as exc:
            if state["debug"]:
                raise
            if isinstance(exc, InputError):
                err.print(f"[red]error:[/red] {one_line(exc)}", highlight=False, markup=True)
                raise typer.Exit(2) from None
            err.print(
                f"[red]internal error (a bug):[/red] {type(exc).__name__}: {one_line(exc)} (rerun with --debug)"
            )
            raise typer.Exit(3) from None

    return wrapper
