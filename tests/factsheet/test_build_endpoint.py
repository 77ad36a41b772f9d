"""`factsheet build` of an endpoint spec against the mock server: known timing in, known figures out."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app

pytestmark = pytest.mark.system

runner = CliRunner()


@pytest.fixture(scope="module")
def built(tmp_path_factory, mock_url, endpoint_spec):
    tmp = tmp_path_factory.mktemp("build")
    out = tmp / "out"
    result = runner.invoke(app, ["build", str(endpoint_spec(tmp, mock_url)), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out, json.loads((out / "factsheet.json").read_text())


def test_three_files_written(built):
    out, _ = built
    for name in ("factsheet.json", "factsheet.html", "factsheet.pdf"):
        assert (out / name).stat().st_size > 0


def test_figures_match_known_timing(built):
    _, sheet = built
    single, loaded = sheet["load"]["points"]
    m = single["result"]["metrics"]
    assert m["completed"] == 4 and m["failed"] == 0
    # The server sends its first token after 50 ms, then one every 5 ms: a client can only see them
    # late (scheduling on a busy 2-core host), never early.
    assert 50 <= m["ttft_ms"]["percentiles"]["p50"] <= 75
    assert 4.5 <= m["tpot_ms"]["percentiles"]["p50"] <= 8
    assert 50 + 7 * 5 <= m["e2el_ms"]["percentiles"]["p50"] <= 50 + 7 * 5 + 30
    assert loaded["result"]["metrics"]["completed"] == 12
    assert single["result"]["metrics"]["goodput"] > 0
    assert "linear" in sheet["load"]["percentile_method"]


def test_unmeasured_sections_say_why(built):
    _, sheet = built
    for section in ("accuracy", "energy", "tuning", "predictor"):
        assert sheet[section]["status"] == "not_measured" and sheet[section]["reason"]


def test_provenance_and_records(built):
    out, sheet = built
    prov = sheet["provenance"]
    assert prov["spec_sha256"].startswith("sha256:") and prov["started_at"] <= prov["finished_at"]
    rec = sheet["load"]["points"][1]["records"]
    header, *lines = (out / rec["path"]).read_text().splitlines()  # schema 1.2.0: a header, then records
    assert len(lines) == rec["records"] == 12
    assert json.loads(header)["header"]["role"] == "load point"


def test_validate_accepts_then_detects_tampering(built, tmp_path):
    out, sheet = built
    assert runner.invoke(app, ["validate", str(out / "factsheet.json")]).exit_code == 0
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "factsheet.json").write_text(json.dumps(sheet))
    (copy / "records").mkdir()
    for p in sheet["load"]["points"]:
        (copy / p["records"]["path"]).write_bytes((out / p["records"]["path"]).read_bytes())
    (copy / "records" / "load-01.jsonl").write_text("{}\n")
    result = runner.invoke(app, ["validate", str(copy / "factsheet.json")])
    assert result.exit_code == 1 and "load-01.jsonl" in result.output


def test_corrupt_factsheet_is_exit_2(tmp_path):
    bad = tmp_path / "factsheet.json"
    bad.write_text('{"schema_version": "1.0.0", "kind": "llm-factsheet"')
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2 and "not valid JSON" in result.output


def test_render_reproduces_html(built, tmp_path):
    out, _ = built
    result = runner.invoke(app, ["render", str(out / "factsheet.json"), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "factsheet.pdf").stat().st_size > 0
