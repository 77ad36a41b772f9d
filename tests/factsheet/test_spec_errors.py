"""Bad input: one clear line naming the field or cause, exit code 2, nothing written."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.targets.ports import free_port
from tests.support.mock_spec import endpoint_spec_dict
from tests.support.spec_builder import DELETE, merged, spec_yaml

runner = CliRunner()


def _build(spec, out):
    return runner.invoke(app, ["build", str(spec), "-o", str(out)])


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda s: merged(s, {"load": {"points": [{"concurrency": 1, "num_requests": -1}, s["load"]["points"][1]]}}), "load.points.0.num_requests"),
        (lambda s: merged(s, {"load": DELETE, "lod": s["load"]}), "lod"),
        (lambda s: merged(s, {"target": {"kind": "tgi"}}), "target"),
        (lambda s: merged(s, {"model": DELETE}), "model: Field required"),
        (lambda s: merged(s, {"load": {"input_len": "sixteen"}}), "load.input_len"),
        # Malformed YAML is the point of these two: they stay text.
        (lambda s: spec_yaml(s) + "  - [unbalanced\n", "not valid YAML"),
        (lambda s: "just a string\n", "YAML mapping"),
    ],
)  # fmt: skip
def test_malformed_spec(tmp_path, edit, expected):
    spec = tmp_path / "model.yaml"
    edited = edit(endpoint_spec_dict("http://127.0.0.1:9"))
    spec.write_text(edited if isinstance(edited, str) else spec_yaml(edited))
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
    spec = endpoint_spec(tmp_path, mock_url, overrides={"target": {"model": "other"}})
    result = _build(spec, tmp_path / "out")
    assert result.exit_code == 2 and "'other' not served" in result.output


def test_missing_api_key_variable(tmp_path, mock_url, monkeypatch, endpoint_spec):
    monkeypatch.delenv("FACTSHEET_TEST_KEY", raising=False)
    spec = endpoint_spec(tmp_path, mock_url, overrides={"target": {"api_key_env": "FACTSHEET_TEST_KEY"}})
    result = _build(spec, tmp_path / "out")
    assert result.exit_code == 2 and "FACTSHEET_TEST_KEY" in result.output


def test_validate_spec(tmp_path, repo):
    for spec in (repo / "models").glob("*.yaml"):
        result = runner.invoke(app, ["validate", str(spec)])
        assert result.exit_code == 0, result.output
