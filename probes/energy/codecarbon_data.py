"""Files shipped inside the installed codecarbon package, read directly (offline, no tracker)."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import codecarbon


def data_file(relative: str) -> Path:
    """Path of `relative` (e.g. 'data/cloud/impact.csv') inside the codecarbon package."""
    return Path(codecarbon.__file__).parent / relative


def describe(relative: str) -> str:
    """How a figure's source is cited: distribution, version and file."""
    return f"codecarbon {metadata.version('codecarbon')} {relative}"
