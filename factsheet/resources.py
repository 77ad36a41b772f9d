"""Files the installed tool reads at run time, found as package data through importlib.resources.

The repository keeps them in top-level folders (templates/, schemas/); pyproject.toml maps those folders to
the packages below, so a wheel installed anywhere carries them and an editable install reads the checkout's.
Nothing here is a path relative to a checkout.
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable

from probes.core.errors import InputError

TEMPLATES = "factsheet.templates"
PUBLISHED_SCHEMAS = "factsheet.published_schemas"


class MissingPackageData(InputError):
    """The installation lacks files the tool needs (a broken or stale install, not a bug in the input)."""


def package_data(package: str) -> Traversable:
    """The folder of package data `package` (e.g. TEMPLATES)."""
    try:
        return resources.files(package)
    except ModuleNotFoundError:
        raise MissingPackageData(
            f"package data {package} is not installed: reinstall llm-factsheet "
            "(`pip install .`, or `pip install -e .` in a checkout)"
        ) from None


def data_file(package: str, name: str) -> Traversable:
    """One file of package data; MissingPackageData when the installation lacks it."""
    path = package_data(package).joinpath(name)
    if not path.is_file():
        raise MissingPackageData(f"{name} is missing from the installed package data {package}: reinstall")
    return path
