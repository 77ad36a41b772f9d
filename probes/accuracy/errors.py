"""The accuracy probe's bad-input error (the CLI maps ValueError subclasses to exit 2)."""

from probes.core.errors import InputError


class AccuracyError(InputError):
    """Missing or corrupt dataset, malformed samples file, invalid configuration."""
