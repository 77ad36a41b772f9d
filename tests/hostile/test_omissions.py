"""What a document leaves out cannot be hidden (issue 42 item 8): every records file in the folder is cited by
a figure, so a run left out of the document (a repeat dropped with `repeats: null`, the headline recomputed
without it) is named by its file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.headline.figures import headline
from factsheet.document.schema import SCHEMA_VERSION, Factsheet
from probes.core.digests import sha256_bytes
from tests.support.mock_server import mock_url_fixture
from tests.support.mock_spec import e2el_slo, endpoint_spec

runner = CliRunner()
FIXTURES = Path(__file__).parents[1] / "factsheet" / "fixtures"


def _copy(version: str, into: Path) -> tuple[Path, dict]:
    shutil.copytree(FIXTURES / f"factsheet-{version}", into)
    return into / "factsheet.json", json.loads((into / "factsheet.json").read_text())


def _validate(path: Path, doc: dict) -> tuple[int, str]:
    path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["validate", str(path)])
    return result.exit_code, result.output


def _without_repeats(doc: dict) -> dict:
    """The forger's document: the repeats dropped and page 1 recomputed without them (as the tool would)."""
    doc["load"]["capacity"]["repeats"] = None
    doc["headline"] = headline(Factsheet.model_validate(doc)).model_dump(mode="json")
    return doc


def test_repeats_left_out_are_named_by_their_files(tmp_path):
    path, doc = _copy("1.9.0", tmp_path / "b")
    assert _validate(path, doc)[0] == 0
    left_out = [r["records"]["path"] for r in doc["load"]["capacity"]["repeats"]["runs"]]
    code, out = _validate(path, _without_repeats(doc))
    assert code == 1, out
    for name in left_out:
        assert f"{name}: stated 'cited by no figure'" in out
    assert "headline" not in out  # page 1 restated consistently: only the uncited files tell


def test_a_stray_file_in_records_is_named(tmp_path):
    path, doc = _copy("1.9.0", tmp_path / "b")
    (tmp_path / "b" / "records" / "capacity-07.jsonl").write_text("{}\n")
    code, out = _validate(path, doc)
    assert code == 1, out
    assert "records/capacity-07.jsonl: stated 'cited by no figure'" in out


# A schema version is lowered only by the tool that wrote it (issue 42 item 8): from 1.10.0 every records
# header names its writer's schema, and every load record states its outcome, which no older tool wrote.
mock_url = mock_url_fixture("module", ttft_ms=20, itl_ms=2)


@pytest.fixture(scope="module")
def current_build(tmp_path_factory, mock_url) -> Path:
    folder = tmp_path_factory.mktemp("current")
    spec = endpoint_spec(folder, mock_url, points=((2, 6),))
    result = runner.invoke(app, ["build", str(spec), "-o", str(folder / "out")])
    assert result.exit_code == 0, result.output
    return folder / "out"


def _relabelled(doc: dict, version: str) -> dict:
    """What 1.8.0 did not state dropped (each run's client check, the rule ids), the version lowered."""
    doc.pop("rules", None)
    for p in doc["load"]["points"]:
        p["result"].pop("client", None)
    doc["schema_version"] = version
    return doc


def _rewrite(root: Path, rec: dict, change) -> None:
    path = root / rec["path"]
    lines = [change(json.loads(line)) for line in path.read_text().splitlines()]
    data = "".join(json.dumps(x) + "\n" for x in lines if x is not None).encode()
    path.write_bytes(data)
    rec["sha256"] = sha256_bytes(data)


def test_the_current_build_is_honest_and_its_headers_name_its_schema(current_build, tmp_path):
    path, doc = _copy_build(current_build, tmp_path / "b")
    assert _validate(path, doc)[0] == 0
    header = json.loads(
        (tmp_path / "b" / doc["load"]["points"][0]["records"]["path"]).read_text().splitlines()[0]
    )
    assert header["header"]["schema_version"] == SCHEMA_VERSION == doc["schema_version"]


@pytest.mark.parametrize("version", ["1.8.0", "1.9.0"])
def test_a_current_build_relabelled_lower_is_named(current_build, tmp_path, version):
    path, doc = _copy_build(current_build, tmp_path / "b")
    code, out = _validate(path, _relabelled(doc, version))
    assert code == 1, out
    recomputed = f"{SCHEMA_VERSION}, the writer's, by its header"
    assert f"schema_version: stated '{version}', recomputed {recomputed!r}" in out


def test_headers_stripped_of_the_writer_still_show_it_by_the_outcomes(current_build, tmp_path):
    """The forger also removes the header's schema_version (or every header, relabelling 1.1.0): the
    records' outcomes, which no older tool wrote, still name the writer."""
    path, doc = _copy_build(current_build, tmp_path / "b")

    def strip(line: dict) -> dict | None:
        return None if "header" in line else line

    for p in doc["load"]["points"]:
        _rewrite(tmp_path / "b", p["records"], strip)
    code, out = _validate(path, _relabelled(doc, "1.1.0"))
    assert code == 1, out
    assert (
        "schema_version: stated '1.1.0', recomputed \"1.10.0, the writer's, by its records' outcomes\"" in out
    )


def _copy_build(source: Path, into: Path) -> tuple[Path, dict]:
    shutil.copytree(source, into)
    return into / "factsheet.json", json.loads((into / "factsheet.json").read_text())


# The search's runs are bound to the repeats its build asked for (schema >= 1.10.0): repeats left out, and
# their records files deleted too, mismatch every step of the search.
REPEATS = {
    "knob": "concurrency",
    "start": 2,
    "max_value": 4,
    "num_requests": 8,
    "confirm_requests": 8,
    "repeats": 3,
}


@pytest.fixture(scope="module")
def repeats_build(tmp_path_factory, mock_url) -> Path:
    folder = tmp_path_factory.mktemp("repeats")
    spec = endpoint_spec(
        folder, mock_url, points=((2, 6),), overrides={"load": {"slo": e2el_slo(5000), "capacity": REPEATS}}
    )
    result = runner.invoke(app, ["build", str(spec), "-o", str(folder / "out")])
    assert result.exit_code == 0, result.output
    return folder / "out"


def test_repeats_left_out_with_their_files_deleted_are_named(repeats_build, tmp_path):
    path, doc = _copy_build(repeats_build, tmp_path / "b")
    assert _validate(path, doc)[0] == 0
    runs = doc["load"]["capacity"]["repeats"]["runs"]
    assert len(runs) == 2
    for run in runs:
        for rec in (run["records"], run.get("server_records")):
            if rec:
                (tmp_path / "b" / rec["path"]).unlink()
    doc["load"]["capacity"]["result"]["search"]["confirm_runs"] = 1  # the search's steps of one run each
    code, out = _validate(path, _without_repeats(doc))
    assert code == 1, out
    assert "load.capacity.repeats (the runs the build asked for): stated 1, recomputed 3" in out
