"""Schema versions: a 1.0.0 factsheet keeps validating (with the tool and against the published schema of
its major); a newer major or minor is refused with the reason (exit 2), never half-validated."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.versions import SchemaVersionError, check_readable

FIXTURE = Path(__file__).parent / "fixtures" / "factsheet-1.0.0"
runner = CliRunner()


def test_fixture_is_1_0_0_and_validates():
    doc = json.loads((FIXTURE / "factsheet.json").read_text())
    assert doc["schema_version"] == "1.0.0"  # frozen: never regenerate this fixture
    result = runner.invoke(app, ["validate", str(FIXTURE / "factsheet.json")])
    assert result.exit_code == 0, result.output
    assert "schema 1.0.0" in result.output


def test_fixture_validates_against_the_published_schema(repo):
    """What a registry does: the 1.0.0 document against the published schema of its major."""
    schema = json.loads((repo / "schemas" / "v1" / "factsheet.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads((FIXTURE / "factsheet.json").read_text()))


def _with_version(tmp_path: Path, version) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "sheet")
    path = tmp_path / "sheet" / "factsheet.json"
    doc = json.loads(path.read_text())
    doc["schema_version"] = version
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("version", "says"),
    [
        ("2.0.0", "newer major version"),
        ("1.99.0", "may hold fields this tool cannot check"),
        ("0.9.0", "older major version"),
        ("1.0", "not a semantic version"),
        (1, "not a semantic version"),
    ],
)
def test_unreadable_version_is_explained_exit_2(tmp_path, version, says):
    result = runner.invoke(app, ["validate", str(_with_version(tmp_path, version))])
    assert result.exit_code == 2, result.output
    assert says in result.output


def test_older_minor_and_other_patch_are_read():
    assert check_readable("1.0.0", "1.3.0").release == (1, 0, 0)
    assert check_readable("1.3.7", "1.3.0").release == (1, 3, 7)  # a patch changes descriptions only
    with pytest.raises(SchemaVersionError, match="newer"):
        check_readable("1.4.0", "1.3.0")
    with pytest.raises(SchemaVersionError, match="newer major"):
        check_readable("2.0.0", "1.3.0")


@pytest.mark.parametrize(
    "text", ["v1.2.0", "1.02.0", "1.2", "1.2.0rc1", "1.2.0+local", "1.2.0.post1", "1.2.0.0", ""]
)
def test_only_plain_semver_is_a_schema_version(text):
    # packaging reads each of these; a factsheet states none of them
    with pytest.raises(SchemaVersionError):
        check_readable(text, "1.3.0")
