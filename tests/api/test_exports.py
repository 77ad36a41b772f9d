"""One import path per public name (issue 29 item 2): each public `__all__` is importable, sorted and
without duplicates; no name is exported by two packages; and the repo's own code imports a façade name
either from the façade or from the module that defines it, never through a third, re-exporting module."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import factsheet.api as api

ROOT = Path(__file__).resolve().parents[2]
TREES = ("factsheet", "tuner", "probes", "tests", "bench")
FACADE = {"factsheet", "factsheet.api"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> list[Path]:
    return [p for tree in TREES if (ROOT / tree).is_dir() for p in sorted((ROOT / tree).rglob("*.py"))]


def declared_all(path: Path) -> list[str] | None:
    """The literal `__all__` list of a module (None when it declares none or builds it)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            try:
                return list(ast.literal_eval(node.value))
            except ValueError:
                return None
    return None


def isort_style(name: str) -> tuple[int, str]:
    """Ruff's RUF022 order (CONSTANTS, then Classes, then functions), which ruff --fix keeps."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def public_alls() -> dict[str, list[str]]:
    found = {}
    for path in sources():
        if path.parts[len(ROOT.parts)] in ("tests", "bench"):
            continue
        names = declared_all(path)
        if names is not None:
            found[module_name(path)] = names
    found["factsheet.api"] = list(api.__all__)
    return found


ALLS = public_alls()


@pytest.mark.parametrize("module", sorted(ALLS))
def test_all_is_sorted_unique_and_importable(module):
    names = ALLS[module]
    assert len(names) == len(set(names)), f"{module}.__all__ has duplicates"
    assert names == sorted(names, key=isort_style), f"{module}.__all__ is not sorted"
    loaded = importlib.import_module(module)
    missing = [n for n in names if not hasattr(loaded, n)]
    assert not missing, f"{module}.__all__ names what it lacks: {missing}"


def test_no_name_is_exported_by_two_packages():
    # the façade re-exports names by design; every other `__all__` is the one home of its names
    owners: dict[str, list[str]] = {}
    for module, names in ALLS.items():
        if module not in FACADE:
            for name in names:
                owners.setdefault(name, []).append(module)
    assert {n: m for n, m in owners.items() if len(m) > 1} == {}


def second_paths() -> list[str]:
    """`from X import Name` of a façade name where X is neither the façade nor Name's defining module."""
    home = {name: api.resolve(name).__module__ for name in api.__all__}
    found = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if (
                        alias.name in home
                        and node.module not in FACADE | {home[alias.name]}
                        and getattr(importlib.import_module(node.module), alias.name, None)
                        is api.resolve(alias.name)
                    ):  # the same object, not a namesake
                        found.append(
                            f"{path.relative_to(ROOT)}:{node.lineno} {alias.name} from {node.module}"
                        )
    return found


def test_facade_names_have_one_import_path():
    assert second_paths() == []
