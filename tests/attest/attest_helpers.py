"""Helpers of the attestation tests (a module of its own: `conftest` names collide across test folders)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from factsheet.cli.commands import app
from tests.support import mock_spec


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str | Path) -> Ran:
    """The CLI in this process (a fresh interpreter costs seconds on a loaded host); the exit codes and
    streams are those of `factsheet ...` (test_cli_bad_input.py runs the real entry point)."""
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


def run_entry_point(*args: str | Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "factsheet", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


# Two short points: the signed files are what these tests are about, not the figures.
endpoint_spec = functools.partial(mock_spec.endpoint_spec, points=((2, 6), (4, 8)))
