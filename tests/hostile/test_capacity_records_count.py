"""Issue 30: a capacity section naming fewer (or more) records files than it has probed points. Before the
fix `validate`, `check`, `render` and `publish` crashed on `zip(..., strict=True)` pairing them (exit 3,
"internal error"); now the document is malformed, refused with exit 2 and one line naming the field,
before anything is written or sent. On a copy of the frozen 1.0.0 fixture (3 probed points)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app

FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0"


def _sheet(tmp_path: Path, keep: slice) -> Path:
    folder = tmp_path / "sheet"
    shutil.copytree(FIXTURE, folder)
    path = folder / "factsheet.json"
    doc = json.loads(path.read_text())
    cap = doc["load"]["capacity"]
    assert len(cap["records"]) == len(cap["result"]["points"]) == 3
    cap["records"] = (cap["records"] * 2)[keep]
    path.write_text(json.dumps(doc))
    return path


def _run(*args: str | Path):
    return CliRunner().invoke(app, [str(a) for a in args])


def _refused(result, *words: str) -> None:
    """Exit 2 and one line naming the cause; no traceback, nothing on stdout."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert all(w in lines[0] for w in words), (words, lines[0])
    assert result.stdout == ""


def _args(command: str, sheet: Path, out: Path) -> list:
    return {
        "validate": ["validate", sheet],
        "check": ["check", sheet, "-p", "release-gate", "-o", out],
        "render": ["render", sheet, "-o", out],
        # nothing listens on port 9: the document is refused before any request
        "publish": ["publish", sheet, "--mlflow-uri", "http://127.0.0.1:9"],
    }[command]


@pytest.mark.parametrize("command", ["validate", "check", "render", "publish"])
def test_fewer_records_files_than_probed_points_is_refused_naming_the_field(command, tmp_path, monkeypatch):
    sheet, out = _sheet(tmp_path, slice(0, 1)), tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    _refused(_run(*_args(command, sheet, out)), "capacity", "records: 1 files for 3 probed points")
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sheet"]  # publish created no mlflow.db, mlruns/


def test_more_records_files_than_probed_points_is_refused(tmp_path):
    _refused(
        _run("validate", _sheet(tmp_path, slice(0, 5))), "capacity", "records: 5 files for 3 probed points"
    )


def test_the_fixture_itself_still_validates(tmp_path):
    result = _run("validate", _sheet(tmp_path, slice(0, 3)))
    assert result.exit_code == 0, result.output
