"""What every sub-command shares: the error console, --debug, and the mapping of failures to exit codes."""

from __future__ import annotations

import functools

import typer
from rich.console import Console

from factsheet.errors import CheckFailed, InputError

err = Console(stderr=True, soft_wrap=True)  # one error = one line, never wrapped
state = {"debug": False}


def _input_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean bad input or an unusable target: one line, exit 2."""
    from factsheet.render import RenderError
    from probes.accuracy import AccuracyError
    from probes.energy import EnergyError
    from probes.load import CapacityError
    from probes.targets import TargetError
    from tuner import TunerConfigError

    return (InputError, TargetError, AccuracyError, EnergyError, TunerConfigError, RenderError, CapacityError)


def guarded(fn):
    """Map known failures to one clear line and an exit code; a traceback only with --debug."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except CheckFailed as exc:
            err.print(f"[red]check failed:[/red] {exc}", highlight=False)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            err.print("interrupted; measurements already taken are kept in the output folder")
            raise typer.Exit(130) from None
        except Exception as exc:
            if state["debug"]:
                raise
            if isinstance(exc, _input_errors()):
                err.print(f"[red]error:[/red] {exc}", highlight=False, markup=True)
                raise typer.Exit(2) from None
            err.print(f"[red]internal error:[/red] {type(exc).__name__}: {exc} (rerun with --debug)")
            raise typer.Exit(3) from None

    return wrapper
