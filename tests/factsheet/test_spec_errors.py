"""Bad input: one clear line naming the field or cause, exit code 2, nothing written."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.targets.ports import free_port

runner = CliRunner()


def _build(spec, out):
    return runner.invoke(app, ["build", str(spec), "-o", str(out)])


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda s: s.replace("num_requests: 4", "num_requests: -1"), "load.points.0.num_requests"),
        (lambda s: s.replace("load:", "lod:"), "lod"),
        (lambda s: s.replace("kind: endpoint", "kind: tgi"), "target"),
        (lambda s: s.replace("model: {name: mock-model}\n", ""), "model: Field required"),
        (lambda s: s.replace("input_len: 16", "input_len: sixteen"), "load.input_len"),
        (lambda s: s + "  - [unbalanced\n", "not valid YAML"),
        (lambda s: "just a string\n", "YAML mapping"),
    ],
)
def test_malformed_spec(tmp_path, edit, expected, endpoint_spec):
    spec = endpoint_spec(tmp_path, "http://127.0.0.1:9")
    spec.write_text(edit(spec.read_text()))
    result = _build(spec, tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert expected in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_missing_spec_file(tmp_path):
    result = _build(tmp_path / "nope.yaml", tmp_path / "out")
    assert result.exit_code == 2 and "cannot read spec" in result.output


def test_unreachable_endpoint(tmp_path, endpoint_spec):
    spec = endpoint_spec(tmp_path, f"http://127.0.0.1:{free_port()}")
    result = _build(spec, tmp_path / "out")
    assert result.exit_code == 2 and "cannot reach" in result.output
    assert not (tmp_path / "out" / "factsheet.json").exists()


def test_wrong_model_name(tmp_path, mock_url, endpoint_spec):
    spec = endpoint_spec(tmp_path, mock_url)
    spec.write_text(spec.read_text().replace("model: mock-model}", "model: other}"))
    result = _build(spec, tmp_path / "out")
    assert result.exit_code == 2 and "'other' not served" in result.output


def test_missing_api_key_variable(tmp_path, mock_url, monkeypatch, endpoint_spec):
    monkeypatch.delenv("FACTSHEET_TEST_KEY", raising=False)
    spec = endpoint_spec(tmp_path, mock_url)
    spec.write_text(
        spec.read_text().replace("model: mock-model}", "model: mock-model, api_key_env: FACTSHEET_TEST_KEY}")
    )
    result = _build(spec, tmp_path / "out")
    assert result.exit_code == 2 and "FACTSHEET_TEST_KEY" in result.output


def test_validate_spec(tmp_path, repo):
    for spec in (repo / "specs").glob("*.yaml"):
        result = runner.invoke(app, ["validate", str(spec)])
        assert result.exit_code == 0, result.output
