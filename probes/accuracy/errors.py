"""The accuracy probe's bad-input error (the CLI maps ValueError subclasses to exit 2)."""


class AccuracyError(ValueError):
    """Missing or corrupt dataset, malformed samples file, invalid configuration."""
