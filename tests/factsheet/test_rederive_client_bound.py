"""The client-bound verdict is re-derived under the rule the document states: a verdict edited in a
document judged by this tool's rule is caught; a 1.0.0 document (judged by the older rule, which it does not
state) keeps validating on its figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.load.runner import CLIENT_BOUND_RULE

FIXTURE = Path(__file__).parent / "fixtures" / "factsheet-1.0.0"


def _validate(tmp_path: Path, edit) -> tuple[int, str]:
    shutil.copytree(FIXTURE, tmp_path / "sheet")
    path = tmp_path / "sheet" / "factsheet.json"
    doc = json.loads(path.read_text())
    edit(doc["load"]["points"][1]["result"]["arrivals"])  # the fixture's open-loop point
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(app, ["validate", str(path)])
    return result.exit_code, result.output


def test_an_edited_verdict_under_the_current_rule_is_caught(tmp_path):
    def flip(a: dict) -> None:
        a["client_bound_rule"] = CLIENT_BOUND_RULE
        a["client_bound"] = not a["client_bound"]

    code, output = _validate(tmp_path, flip)
    assert code == 1 and "load.points[1].result.arrivals.client_bound:" in output


def test_an_edited_send_lag_is_caught_whatever_the_rule(tmp_path):
    def lag(a: dict) -> None:
        a["send_lag_ms"]["percentiles"]["p99"] += 1.0

    code, output = _validate(tmp_path, lag)
    assert code == 1 and "arrivals.send_lag_ms.percentiles.p99" in output
