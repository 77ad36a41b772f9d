"""Shared by the hostile-shape and confinement tests (issue 20, items 3 and 4): one honest factsheet built
against the mock server, a private copy of it per test to turn hostile, and the CLI run as a separate
process with a timeout, so that an attack that hangs (a FIFO) or exhausts memory fails the test instead of
blocking or killing the suite.

A module of its own (not a conftest: names collide across test folders); tests/hostile/conftest.py registers
the fixtures for the folder, so that the honest build is made once.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from factsheet.attest.keys import generate
from tests.support import mock_spec
from tests.support.cli_process import Ran, run_cli
from tests.support.mock_server import mock_url_fixture

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 120  # far beyond any refusal (they take a process start and milliseconds); a hang fails
MEMORY_CAP = 3 << 30  # address space a refusing command may use: /dev/zero read whole would need far more


def cli(*args: str | Path, timeout: float = TIMEOUT_S) -> Ran:
    """`factsheet ARGS` as its own process (this checkout's code), under a memory cap and a timeout: forked from
    this worker's CLI server, which has made the tool's imports once (tests/support/cli_process.py)."""
    env = {
        **os.environ,
        "COLUMNS": "200",
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": "1",  # thread pools reserve address space per thread, not memory used
        "OPENBLAS_NUM_THREADS": "1",
    }
    return run_cli(list(args), env=env, timeout=timeout, memory_cap=MEMORY_CAP)


def assert_refused(ran: Ran, *words: str) -> None:
    """Exit 2, one line on stderr naming the cause (each of `words`), nothing on stdout, no traceback."""
    lines = ran.stderr.strip().splitlines()
    assert ran.returncode == 2, (ran.returncode, ran.stderr[-2000:])
    assert len(lines) == 1, ran.stderr[-2000:]
    assert lines[0].startswith("error: "), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert ran.stdout == "", ran.stdout


def assert_nothing_written(out: Path) -> None:
    assert not out.exists() or not any(out.iterdir()), sorted(p.name for p in out.iterdir())


mock_url = mock_url_fixture(ttft_ms=20, itl_ms=2)


@pytest.fixture(scope="session")
def honest(tmp_path_factory, mock_url) -> Path:
    """A real factsheet (JSON, HTML, PDF, raw records of two load points), built once by the CLI."""
    folder = tmp_path_factory.mktemp("honest")
    spec = mock_spec.endpoint_spec(folder, mock_url, points=((2, 6), (4, 8)))
    ran = cli("build", spec, "-o", folder / "out", timeout=600)
    assert ran.returncode == 0, ran.stderr
    return folder / "out"


@pytest.fixture
def sheet(honest, tmp_path) -> Path:
    """A private copy of the honest factsheet's folder (tmp/sheet), to turn hostile."""
    out = tmp_path / "sheet"
    shutil.copytree(honest, out)
    return out


@pytest.fixture(scope="session")
def keys(tmp_path_factory) -> tuple[Path, Path]:
    private, public, _ = generate(tmp_path_factory.mktemp("keys"))
    return private, public


def edit(folder: Path, change) -> dict:
    """Apply `change` to factsheet.json's data (a dict) and write it back; returns the data."""
    path = folder / "factsheet.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))
    return data


def restate_records(folder: Path, index: int, content: bytes, records: int | None = None) -> str:
    """Replace load point `index`'s records with `content` and restate its sha256 (and count), as a
    hostile author would: the digest check then passes and only the shape can refuse it."""
    import hashlib

    data = json.loads((folder / "factsheet.json").read_text())
    rec = data["load"]["points"][index]["records"]
    (folder / rec["path"]).write_bytes(content)

    def change(d):
        r = d["load"]["points"][index]["records"]
        r["sha256"] = hashlib.sha256(content).hexdigest()
        if records is not None:
            r["records"] = records

    edit(folder, change)
    return rec["path"]


def records_path(folder: Path, index: int = 0) -> str:
    return json.loads((folder / "factsheet.json").read_text())["load"]["points"][index]["records"]["path"]


def set_records_path(folder: Path, path: str, index: int = 0) -> None:
    def change(d):
        d["load"]["points"][index]["records"]["path"] = path

    edit(folder, change)
