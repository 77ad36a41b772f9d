"""Builds against the mock server answering as an engine documents: llama-cpp-python's default (a new request
cuts the running stream) is refused before anything is measured, in one line with the remedy, and writes no
factsheet; with `--interrupt_requests False` it is measured; transformers serve (no [DONE], an empty model
listing) is measured with `check_model: false`, its replies completed, the engine and the deviation stated, and
the sheet validates."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.targets.mock_server import MockServerConfig, running
from tests.support.mock_spec import endpoint_spec_dict
from tests.support.spec_builder import write_spec

pytestmark = pytest.mark.system  # builds against the mock server
runner = CliRunner()
TIMING = {"ttft_ms": 5, "itl_ms": 15}  # the preflight's 32-token streams last ~0.5 s: the second overlaps


def _build(tmp_path, cfg: MockServerConfig, target: dict | None = None):
    with running(cfg) as url:
        spec = write_spec(
            tmp_path / "model.yaml", endpoint_spec_dict(url, ((2, 6),), {"target": target or {}})
        )
        return runner.invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])


def test_llama_cpp_python_default_refused_with_the_remedy(tmp_path):
    res = _build(tmp_path, MockServerConfig(engine="llama-cpp-python", **TIMING))
    assert res.exit_code == 2, res.output
    last = res.output.strip().splitlines()[-1]
    assert "llama-cpp-python server cuts running streams when a new request arrives" in last
    assert last.endswith("start it with --interrupt_requests False")
    assert not (tmp_path / "out" / "factsheet.json").exists()


def test_llama_cpp_python_without_interrupts_is_measured(tmp_path):
    res = _build(tmp_path, MockServerConfig(engine="llama-cpp-python", interrupts=False, **TIMING))
    assert res.exit_code == 0, res.output
    sheet = json.loads((tmp_path / "out" / "factsheet.json").read_text())
    verdicts = {c["name"]: c["verdict"] for c in sheet["conformance"]["checks"]}
    assert verdicts["concurrency"] == "conforms" and verdicts["stream_usage"] == "deviates"
    assert sheet["conformance"]["engine"]["engine"] == "llama-cpp-python"


def test_transformers_serve_measured_and_validated(tmp_path):
    res = _build(tmp_path, MockServerConfig(engine="transformers-serve", **TIMING), {"check_model": False})
    assert res.exit_code == 0, res.output
    path = tmp_path / "out" / "factsheet.json"
    sheet = json.loads(path.read_text())
    engine = sheet["conformance"]["engine"]
    assert (engine["engine"], engine["served_model"]) == ("transformers-serve", "mock-model")
    assert [c["name"] for c in sheet["conformance"]["checks"] if c["verdict"] == "deviates"] == ["done_event"]
    assert sheet["load"]["points"][0]["result"]["metrics"]["completed"] == 6
    assert "Serving engine and conformance" in (tmp_path / "out" / "factsheet.html").read_text()
    assert runner.invoke(app, ["validate", str(path)]).exit_code == 0
