"""A constant-rate open loop (`burstiness: .inf`) in a build: infinity has no JSON number, so the factsheet
writes null; it must read back as the constant process it measured and validate against the published
schema (before, the factsheet it wrote was refused by its own `validate`)."""

from __future__ import annotations

import json
import math

import jsonschema
import pytest
from typer.testing import CliRunner

from factsheet.api.json_schemas import json_schemas
from factsheet.cli.commands import app
from factsheet.document.schema import Factsheet

pytestmark = pytest.mark.system

runner = CliRunner()


def test_a_constant_rate_point_round_trips_and_validates(tmp_path, mock_url, endpoint_spec):
    spec = endpoint_spec(tmp_path, mock_url)
    text = spec.read_text()
    points = text[text.index("  points:\n") :]
    spec.write_text(text.replace(points, "  points:\n    - {rate: 40, burstiness: .inf, num_requests: 8}\n"))
    out = tmp_path / "out"
    built = runner.invoke(app, ["build", str(spec), "-o", str(out)])
    assert built.exit_code == 0, built.output
    doc = json.loads((out / "factsheet.json").read_text())
    assert doc["load"]["points"][0]["result"]["point"]["burstiness"] is None
    jsonschema.validate(doc, json_schemas()["v1/factsheet.schema.json"])
    sheet = Factsheet.model_validate(doc)
    assert math.isinf(sheet.load.points[0].result.point.burstiness)
    ok = runner.invoke(app, ["validate", str(out / "factsheet.json")])
    assert ok.exit_code == 0, ok.output
    # The records' binding holds: the point's settings recompute to the same context digest.
    assert "records bound" in ok.output
