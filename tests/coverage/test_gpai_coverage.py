"""The EU GPAI documentation coverage matrix: shipped as package data, every pointer it names resolves in the
factsheet's JSON Schema, exported as JSON for a factsheet, printed in the compliance section."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from factsheet.coverage.matrix import Matrix, matrix, resolve
from factsheet.document.schema import Factsheet
from factsheet.rederive.validate import load_factsheet
from factsheet.render.sheet import render_html
from tests.attest.attest_helpers import run_cli

FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0" / "factsheet.json"
# the items the reference notes name (docs/compliance.md), and nothing else
MDF_ITEMS = 14
ANNEX_XI_ITEMS = 12
SPDX_ITEMS, CYCLONEDX_ITEMS, ISO_42005_ITEMS = 10, 8, 7  # the fields compliance-references.md names
POINTER_IN_NOTE = re.compile(r"\(?(/[a-z_]+(?:/[a-z0-9_]+)+)\)?")


def _schema_has(schema: dict, pointer: str) -> bool:
    """Whether `pointer` names a field the schema allows (through $ref, unions, lists and maps)."""
    defs = schema.get("$defs", {})

    def options(node: dict) -> list[dict]:
        if "$ref" in node:
            return options(defs[node["$ref"].split("/")[-1]])
        subs = [s for k in ("anyOf", "oneOf", "allOf") for s in node.get(k, [])]
        return [o for s in subs for o in options(s)] if subs else [node]

    nodes = options(schema)
    for part in pointer.split("/")[1:]:
        nxt = []
        for n in nodes:
            if part in n.get("properties", {}):
                nxt += options(n["properties"][part])
            elif part.isdigit() and isinstance(n.get("items"), dict):
                nxt += options(n["items"])
            elif isinstance(n.get("additionalProperties"), dict):
                nxt += options(n["additionalProperties"])
        if not nxt:
            return False
        nodes = nxt
    return True


def _pointers(m: Matrix) -> set[str]:
    named = {p for i in m.items for p in i.pointers}
    return named | {p for i in m.items for p in POINTER_IN_NOTE.findall(i.note)}


def test_every_pointer_resolves_in_the_factsheet_schema():
    m = matrix()
    schema = Factsheet.model_json_schema()
    missing = sorted(p for p in _pointers(m) if not _schema_has(schema, p))
    assert not missing, f"pointers the schema no longer has: {missing}"
    assert not _schema_has(schema, "/identity/no_such_field")  # the check can fail
    assert not _schema_has(schema, "/energy/energy/total/gross/no_such_field")


def test_the_matrix_is_complete_and_honest():
    m = matrix()
    counts = {k: sum(1 for i in m.items if i.framework == k) for k in m.frameworks}
    assert counts == {
        "gpai-cop-mdf": MDF_ITEMS, "ai-act-annex-xi-1": ANNEX_XI_ITEMS, "spdx-3-aipackage": SPDX_ITEMS,
        "cyclonedx-1.6-modelcard": CYCLONEDX_ITEMS, "nist-ai-600-1": 12, "iso-iec-42005-6": ISO_42005_ITEMS,
    }  # fmt: skip
    nist = [i.item for i in m.items if i.framework == "nist-ai-600-1"]
    assert (
        nist[0] == "CBRN information or capabilities" and nist[-1] == "value chain and component integration"
    )
    for i in m.items:  # covered or partial names where; outside names nowhere
        assert bool(i.pointers) == (i.status != "outside"), i.item
    assert {i.item for i in m.items if i.status == "outside"} >= {"training data facts", "training time"}


def test_export_states_what_each_pointer_holds_in_a_factsheet(tmp_path):
    result = run_cli("export", FIXTURE, "--format", "gpai-coverage", "-o", tmp_path)
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "gpai-coverage.json").read_text())
    assert doc["kind"] == "llm-factsheet-gpai-coverage" and doc["factsheet_sha256"].startswith("sha256:")
    found = {f["pointer"]: f["state"] for i in doc["items"] for f in i["found"]}
    raw = load_factsheet(FIXTURE).model_dump(mode="json")
    for pointer, state in found.items():  # against the fixture itself
        ok, value = resolve(raw, pointer)
        assert (state == "absent") == (not ok or value is None), pointer
    assert found["/identity/name"] == "present" and found["/identity/license"] == "absent"
    assert found["/system/host"] == "present"


@pytest.mark.parametrize("bad", ["nope", "GPAI"])
def test_an_unknown_format_is_one_line_exit_2(tmp_path, bad):
    result = run_cli("export", FIXTURE, "--format", bad, "-o", tmp_path)
    assert result.returncode == 2 and not (tmp_path / "gpai-coverage.json").exists()


def test_the_compliance_section_prints_the_matrix():
    html = render_html(load_factsheet(FIXTURE))
    section = html[html.index('id="compliance"') :]
    assert "Coverage map: governance documentation" in section
    for i in matrix().items:
        assert i.item.replace("&", "&amp;") in section or i.item in section, i.item
    assert "not in a factsheet&#39;s scope" in section or "not in a factsheet's scope" in section
