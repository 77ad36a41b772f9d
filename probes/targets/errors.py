from probes.core.errors import InputError


class TargetError(InputError):
    """The target could not be prepared, started or reached; the message names the cause."""
