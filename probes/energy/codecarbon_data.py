"""Files shipped inside the installed codecarbon package, read directly (offline, no tracker).

The package is located, not imported: its `__init__` imports the emissions tracker and its dependencies,
which no command needs for these files (about 50 ms of the 0.9 s every command spends importing the
document schema, measured here)."""

from __future__ import annotations

from functools import cache
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path


@cache
def _package_dir() -> Path:
    spec = find_spec("codecarbon")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("codecarbon is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def data_file(relative: str) -> Path:
    """Path of `relative` (e.g. 'data/cloud/impact.csv') inside the codecarbon package."""
    return _package_dir() / relative


def describe(relative: str) -> str:
    """How a figure's source is cited: distribution, version and file."""
    return f"codecarbon {metadata.version('codecarbon')} {relative}"
