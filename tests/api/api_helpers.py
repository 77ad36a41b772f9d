"""Helpers of the API tests (a module of its own: `conftest` names collide across test folders)."""

from __future__ import annotations

import functools
from pathlib import Path

import mock_spec
from typer.testing import CliRunner

from factsheet.cli import app

# Two short points: what these tests are about is the calls' results, not the figures.
endpoint_spec = functools.partial(mock_spec.endpoint_spec, points=((2, 6), (4, 8)))

# A policy either side of the mock's timing: its E2EL is at least 20 + 7 x 5 = 55 ms on any host.
POLICY = """\
policy_version: 1
id: p99-{name}
title: p99 E2EL within {threshold} ms
version: "1"
rules:
  - id: p99-e2el
    title: p99 E2EL within {threshold} ms
    field: load.points[headline].result.metrics.e2el_ms.percentiles.p99
    op: "<="
    threshold: {threshold}
    unit: ms
    evidence: {{measured: true, raw_records: false}}
"""


def policy(folder: Path, name: str, threshold: float) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(POLICY.format(name=name, threshold=threshold))
    return path


def cli(*args: str | Path):
    """`factsheet ...` in this process: exit code and output, as the command gives them."""
    return CliRunner().invoke(app, [str(a) for a in args])


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()}
