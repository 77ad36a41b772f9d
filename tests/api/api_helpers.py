"""Helpers of the API tests (a module of its own: `conftest` names collide across test folders)."""

from __future__ import annotations

import functools
from pathlib import Path

from typer.testing import CliRunner

from factsheet.cli.commands import app
from tests.support import mock_spec

# Two short points: what these tests are about is the calls' results, not the figures.
endpoint_spec = functools.partial(mock_spec.endpoint_spec, points=((2, 6), (4, 8)))


def policy(folder: Path, name: str, threshold: float) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(mock_spec.P99_POLICY.format(name=name, threshold=threshold))
    return path


def cli(*args: str | Path):
    """`factsheet ...` in this process: exit code and output, as the command gives them."""
    return CliRunner().invoke(app, [str(a) for a in args])


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}
