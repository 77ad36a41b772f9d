"""One error tree for the whole tool.

`InputError` means bad input or an unusable target: the user can fix it, the CLI prints its message as
one line and exits 2. Every package raises a subclass of it for that case (probes own it because every
other package imports probes). `CheckFailed` means a check ran and failed: exit 1. Anything else that escapes is a bug: exit 3.
"""

from __future__ import annotations

from pydantic import ValidationError


class InputError(ValueError):
    """Bad input or unusable target; the message names the field or the cause (exit code 2)."""


class CheckFailed(Exception):
    """A check ran and failed (e.g. altered raw records, a compliance gate): exit code 1."""


def describe_validation_error(exc: ValidationError, shown: int = 3) -> str:
    """'field.path: message' for the first few errors (the fields a user must fix), and a count of the rest."""
    errors = exc.errors()
    parts = [f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}" for e in errors[:shown]]
    more = f" (and {len(errors) - shown} more)" if len(errors) > shown else ""
    return "; ".join(parts) + more
