"""The accuracy probe's bad-input error: one of the InputError family, so the CLI reports it in one line and
exits 2."""

from probes.core.errors import InputError


class AccuracyError(InputError):
    """Missing or corrupt dataset, malformed samples file, invalid configuration."""
