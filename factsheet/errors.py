"""Errors the CLI turns into one clear line and an exit code."""

from __future__ import annotations

from pydantic import ValidationError


class InputError(ValueError):
    """Bad input or unusable target: exit code 2."""


class CheckFailed(Exception):
    """A check ran and failed (e.g. a compliance gate): exit code 1."""


def describe_validation_error(exc: ValidationError, shown: int = 3) -> str:
    """'field.path: message' for the first few errors (the fields a user must fix), and a count of the rest."""
    errors = exc.errors()
    parts = [f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}" for e in errors[:shown]]
    more = f" (and {len(errors) - shown} more)" if len(errors) > shown else ""
    return "; ".join(parts) + more
