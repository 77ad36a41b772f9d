"""Errors the CLI turns into one clear line and an exit code (the tree itself lives in `probes.errors`)."""

from __future__ import annotations

from probes.errors import InputError, describe_validation_error

__all__ = ["CheckFailed", "InputError", "describe_validation_error"]


class CheckFailed(Exception):
    """A check ran and failed (e.g. altered raw records, a compliance gate): exit code 1."""
