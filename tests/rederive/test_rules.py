"""The rule ids a factsheet states (schema >= 1.11.0), held to the registry and to its version's rule set: a
forged id, an id of a later version on an older document, or a rule left out is named, exit 1, never a
traceback; an older document without ids is judged by the rules of its version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.rules import rule_set
from factsheet.document.schema import SCHEMA_VERSION
from factsheet.rederive.rules import stated_rules
from tests.support import sheet_fixture as fx

FIXTURES = Path(__file__).parents[1] / "factsheet" / "fixtures"
NOW = rule_set(SCHEMA_VERSION)


def test_a_build_states_the_ids_of_its_version_and_they_hold():
    sheet = fx.build_sheet(fx.load_points())
    assert sheet.rules == NOW.ids and "rules/stated" in NOW
    assert stated_rules(sheet, NOW) == []


def test_a_forged_id_is_named_with_its_field():
    sheet = fx.build_sheet(fx.load_points())
    sheet.rules[2] = "client-bound/forged"
    (found,) = stated_rules(sheet, NOW)[:1]
    assert found.figure == "rules[2]" and found.stated == "client-bound/forged"
    assert "not a judging rule this tool knows" in str(found.recomputed)


def test_a_rule_of_another_version_and_a_rule_left_out_are_named():
    sheet = fx.build_sheet(fx.load_points())
    sheet.rules = [r if r != "client-bound/last-byte" else "client-bound/sent-s" for r in sheet.rules]
    found = {d.figure: str(d.recomputed) for d in stated_rules(sheet, NOW)}
    assert "judged documents from 1.1.0 until 1.8.0" in found.pop(
        f"rules[{NOW.ids.index('client-bound/last-byte')}]"
    )
    assert found == {"rules": "leaves out client-bound/last-byte"}


def test_a_document_of_this_version_without_ids_is_named():
    sheet = fx.build_sheet(fx.load_points()).model_copy(update={"rules": None})
    assert [d.figure for d in stated_rules(sheet, NOW)] == ["rules"]


def _stored(tmp_path: Path, version: str, edit) -> tuple[int, str]:
    copy = tmp_path / version
    shutil.copytree(FIXTURES / f"factsheet-{version}", copy)
    doc = json.loads((copy / "factsheet.json").read_text())
    edit(doc)
    (copy / "factsheet.json").write_text(json.dumps(doc))
    result = CliRunner().invoke(app, ["validate", str(copy / "factsheet.json")])
    return result.exit_code, result.output


def test_an_older_document_validates_by_its_version_and_a_later_rule_on_it_is_named(tmp_path):
    assert _stored(tmp_path / "a", "1.7.0", lambda doc: None)[0] == 0
    code, output = _stored(tmp_path / "b", "1.7.0", lambda doc: doc.update(rules=["client-bound/last-byte"]))
    assert code == 1 and "rules[0]: stated 'client-bound/last-byte'" in output, output
    assert "Traceback" not in output
