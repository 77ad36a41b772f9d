"""The accuracy probe's bad-input error: one of the InputError family, so the CLI reports it in one line and
exits 2."""

from probes.core.errors import InputError


class AccuracyError(InputError):
    """Missing or corrupt dataset, malformed samples file, invalid configuration."""


class SandboxStartError(AccuracyError):
    """The code-test sandbox did not come up: no program was run, so no verdict (the host's failure, exit 2)."""
