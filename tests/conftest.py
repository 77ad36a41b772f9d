"""The package data the tests read is this checkout's.

pyproject.toml maps top-level folders (templates/, schemas/) to packages (factsheet.templates, ...). The
editable install resolves them to the checkout it was made from; a second checkout of the same repository
(a git worktree sharing that environment) would otherwise render with the first one's templates. The wheel
and editable lookups themselves are tested in tests/factsheet/test_packaging.py.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _map_package_data() -> None:
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


_map_package_data()
