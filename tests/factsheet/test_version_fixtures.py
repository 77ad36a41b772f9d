"""Every factsheet version this tool has written still validates: one stored build per schema minor, made
by the tool as it stood at the last commit that wrote that version (fixtures/make_version_fixtures.sh),
checked by today's tool and against today's published schema of its major, as a registry would."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.schema import SCHEMA_VERSION
from factsheet.document.versions import parse

FIXTURES = Path(__file__).parent / "fixtures"
STORED = sorted((p for p in FIXTURES.glob("factsheet-*") if p.is_dir()), key=lambda p: parse(p.name[10:]))


def test_every_older_minor_has_a_stored_build():
    """A version bump leaves its predecessor behind as a fixture (add its commit to the script, run it)."""
    current = parse(SCHEMA_VERSION)
    wanted = {f"{current.major}.{minor}.0" for minor in range(current.minor)}
    assert wanted <= {p.name[10:] for p in STORED}


@pytest.mark.parametrize("folder", STORED, ids=lambda p: p.name)
def test_stored_build_validates_with_this_tool(folder):
    doc = json.loads((folder / "factsheet.json").read_text())
    assert doc["schema_version"] == folder.name[10:]  # written by that version's tool: never regenerated
    result = CliRunner().invoke(app, ["validate", str(folder / "factsheet.json")])
    assert result.exit_code == 0, result.output
    assert f"schema {doc['schema_version']}" in result.output


@pytest.mark.parametrize("folder", STORED, ids=lambda p: p.name)
def test_stored_build_validates_against_the_published_schema(folder, repo):
    schema = json.loads((repo / "schemas" / "v1" / "factsheet.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads((folder / "factsheet.json").read_text()))


@pytest.mark.parametrize("folder", [p for p in STORED if p.name >= "factsheet-1.2.0"], ids=lambda p: p.name)
def test_a_figure_edited_in_a_stored_build_is_caught(folder, tmp_path):
    """The stored builds are not merely readable: today's tool still re-derives their figures."""
    copy = tmp_path / folder.name
    copy.mkdir()
    for path in folder.rglob("*"):
        if path.is_file():
            (copy / path.relative_to(folder)).parent.mkdir(parents=True, exist_ok=True)
            (copy / path.relative_to(folder)).write_bytes(path.read_bytes())
    doc = json.loads((copy / "factsheet.json").read_text())
    metrics = doc["load"]["points"][0]["result"]["metrics"]
    metrics["completed"] += 1
    (copy / "factsheet.json").write_text(json.dumps(doc))
    result = CliRunner().invoke(app, ["validate", str(copy / "factsheet.json")])
    assert result.exit_code == 1, result.output
    assert "load.points[0].result.metrics.completed" in result.output
