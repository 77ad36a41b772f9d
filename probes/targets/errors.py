class TargetError(RuntimeError):
    """The target could not be prepared, started or reached; the message names the cause."""
