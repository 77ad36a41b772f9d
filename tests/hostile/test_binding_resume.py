"""`--resume` and the records header: checkpoints whose records are bound are reused (the resumed factsheet
validates, its records bound); a checkpoint an older tool left (records without a header) is measured again,
since reusing it would put unbound records into a 1.2.0 factsheet."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.core.digests import sha256_bytes
from probes.targets.mock_server import MockServerConfig, running
from tests.support.mock_spec import e2el_slo, endpoint_spec_dict
from tests.support.spec_builder import write_spec

pytestmark = pytest.mark.system

runner = CliRunner()


def _spec(url: str) -> dict:
    load = {"slo": e2el_slo(5000)}
    return endpoint_spec_dict(url, ((2, 6), (1, 4)), {"name": "mock-resume", "load": load})


def _unbind(out, name: str) -> None:
    """What an older tool's checkpoint looks like: records without a header, digests to match."""
    records = out / "records" / f"{name}.jsonl"
    data = b"".join(line + b"\n" for line in records.read_bytes().splitlines()[1:])
    records.write_bytes(data)
    checkpoint = out / "measurements" / f"{name}.json"
    saved = json.loads(checkpoint.read_text())
    saved["value"]["records"]["sha256"] = sha256_bytes(data)
    checkpoint.write_text(json.dumps(saved))


def test_resume_reuses_bound_records_and_remeasures_unbound_ones(tmp_path):
    with running(MockServerConfig(model="mock-model", ttft_ms=20, itl_ms=5)) as url:
        spec = tmp_path / "model.yaml"
        write_spec(spec, _spec(url))
        out = tmp_path / "out"
        assert runner.invoke(app, ["build", str(spec), "-o", str(out)]).exit_code == 0
        (out / "factsheet.json").unlink()  # as if the build had been killed before writing it
        _unbind(out, "load-02")
        resumed = runner.invoke(app, ["build", str(spec), "-o", str(out), "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert "reused load 1/2" in resumed.output
    assert "load 2/2: concurrency=1 measured again" in resumed.output
    assert "carry no context header" in resumed.output
    checked = runner.invoke(app, ["validate", str(out / "factsheet.json")])
    assert checked.exit_code == 0, checked.output
    assert "records bound" in checked.output
