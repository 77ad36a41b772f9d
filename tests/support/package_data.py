"""This checkout's package data in place of the editable install's (tests/conftest.py says why); imported by the
CLI processes the hostile tests start too, so it needs nothing of pytest."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def map_package_data() -> None:
    """Each package-dir entry of pyproject.toml imported from this checkout's folder."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for name, folder in config["tool"]["setuptools"].get("package-dir", {}).items():
        if not name:
            continue
        init = ROOT / folder / "__init__.py"
        spec = importlib.util.spec_from_file_location(
            name, init, submodule_search_locations=[str(init.parent)]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(importlib.import_module(parent), child, module)
