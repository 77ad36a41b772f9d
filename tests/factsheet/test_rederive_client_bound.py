"""The client-bound verdict is re-derived under the rule of the document's version (factsheet/document/rules):
a 1.0.0 document (judged by a rule it does not state, its verdict attested) keeps validating on its figures,
and one edited to state today's rule is caught by that rule's words, never replayed by them."""

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


def test_today_s_rule_stated_on_a_1_0_0_document_is_caught(tmp_path):
    def flip(a: dict) -> None:
        a["client_bound_rule"] = CLIENT_BOUND_RULE
        a["client_bound"] = not a["client_bound"]

    code, output = _validate(tmp_path, flip)
    assert code == 1 and "load.points[1].result.arrivals.client_bound_rule:" in output


def test_an_edited_send_lag_is_caught_whatever_the_rule(tmp_path):
    def lag(a: dict) -> None:
        a["send_lag_ms"]["percentiles"]["p99"] += 1.0

    code, output = _validate(tmp_path, lag)
    assert code == 1 and "arrivals.send_lag_ms.percentiles.p99" in output
