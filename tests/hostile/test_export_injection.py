"""Exports of a hostile factsheet: text from the factsheet never becomes structure in the documents
registries parse (issue 20: a newline and an unclosed `<!--` in the model name made the Hugging Face card
show only a forged results table).

Every free-text field an export carries gets each hostile string; the output is parsed with the parser a
registry would use (markdown-it-py, CommonMark with GFM tables, for the card's body; the Hub's own
front-matter split and yaml.safe_load for its metadata; json for CycloneDX and SPDX) and its structure
compared with the export of the honest factsheet: the same blocks, table rows and cells, the same keys, no
raw HTML; the text itself comes back exactly. Names (model name, version, owner, licence, factsheet name,
load-point labels) holding a control character are refused instead: exit 2, one line naming the field,
nothing written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from huggingface_hub.repocard import REGEX_YAML_BLOCK
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.export import cyclonedx, hf, spdx
from factsheet.export.readout import accuracy_figures, headline_figures, serving_figures, source
from tests.hostile.exports_builds import empty_sheet, honest_sheet, with_text, write

runner = CliRunner()

# Each a way out of a text field: a forged results table hidden behind an unclosed HTML comment (the
# issue's case), a comment's end, table cells, a YAML document break with a forged key, a script element's
# end, control characters (a bell, a terminal escape, a NUL-like C1 character), YAML anchor, alias and tag.
FORGED_TABLE = "\n\n| figure | value |\n|---|---|\n| pass@1 | 0.99 |\n\n<!--"
HOSTILE = {
    "comment": "x" + FORGED_TABLE,
    "comment end": "--> <b>bold</b>",
    "cells": "a | b | c",
    "yaml break": "x\n---\nmodel_name: forged\n...\n---",
    "script": "</script><script>alert(1)</script>",
    "control": "a\x07b\x1b[31mc\x85d\u2028e\u202ef",
    "yaml node": "&anchor !!python/object/apply:os.system ['id'] *anchor",
}
# The same, on one line: what a name may hold (a name with a line break or control character is refused).
ONE_LINE = {k: v for k, v in HOSTILE.items() if k not in ("comment", "yaml break", "control")}
ONE_LINE["comment"] = "x <!-- | pass@1 | 0.99 |"
ONE_LINE["yaml break"] = "--- model_name: forged ..."

NAMES = {
    "name": ("name",),
    "identity.name": ("identity", "name"),
    "identity.version": ("identity", "version"),
    "identity.owner": ("identity", "owner"),
    "identity.license": ("identity", "license"),
    "load.points[0].result.label": ("load", "points", 0, "result", "label"),
}
PROSE = {  # free text that may honestly span lines: escaped
    "identity.intended_use": ("identity", "intended_use"),
    "identity.out_of_scope": ("identity", "out_of_scope"),
    "provenance.tool_version": ("provenance", "tool_version"),
    "accuracy.result.benchmark": ("accuracy", "result", "benchmark"),
    "accuracy.result.subset": ("accuracy", "result", "subset"),
    "accuracy.result.dataset.name": ("accuracy", "result", "dataset", "name"),
    "accuracy.result.dataset.version": ("accuracy", "result", "dataset", "version"),
    "energy.energy.total.boundary": ("energy", "energy", "total", "boundary"),
}
REASONS = {  # the reasons of the sections not measured (the card lists them)
    "load.reason": ("load", "reason"),
    "accuracy.reason": ("accuracy", "reason"),
    "energy.reason": ("energy", "reason"),
}
# What no export may hold raw: C0/C1 controls but the line feed, line and paragraph separators, and
# bidirectional-text controls (a terminal escape or a reordering of what a reader sees).
RAW_CONTROLS = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
WRITERS = {"hf": hf.write, "cyclonedx": cyclonedx.write, "spdx": spdx.write}


def _export(tmp_path: Path, sheet, fmt: str) -> Path:
    folder = tmp_path / fmt
    src = source(write(folder / "in", sheet), sheet)
    return WRITERS[fmt](src, folder / "out")


# --- what each format's parser makes of an export ------------------------------------------------


def _card(path: Path) -> tuple[dict, str]:
    """The front matter (the Hub's split, then yaml.safe_load) and the Markdown body of a model card."""
    text = path.read_text()
    match = REGEX_YAML_BLOCK.search(text)
    assert match, "no front matter"
    return yaml.safe_load(match.group(2)), text[match.end() :]


def _markdown():
    return MarkdownIt("commonmark").enable("table")


def _blocks(body: str) -> list[str]:
    """The block structure: every token but the inline text (headings, paragraphs, table rows and cells)."""
    return [f"{t.type}:{t.tag}" for t in _markdown().parse(body) if t.type != "inline"]


def _raw_html(body: str) -> list[str]:
    tokens = _markdown().parse(body)
    inline = [c for t in tokens if t.children for c in t.children]
    return [t.content for t in tokens + inline if t.type in ("html_block", "html_inline")]


def _texts(body: str) -> list[str]:
    """The visible text of each inline run (a heading, a paragraph, a table cell, a list item)."""
    out = []
    for t in _markdown().parse(body):
        if t.type == "inline":
            out.append("".join(c.content for c in t.children if c.type in ("text", "code_inline")))
    return out


def _table(body: str) -> list[list[str]]:
    """The results table's body rows, as the text of their cells."""
    rows, row, inside = [], None, False
    for t in _markdown().parse(body):
        if t.type == "tbody_open":
            inside = True
        elif t.type == "tbody_close":
            inside = False
        elif inside and t.type == "tr_open":
            row = []
        elif inside and t.type == "tr_close":
            rows.append(row)
        elif inside and t.type == "inline":
            row.append("".join(c.content for c in t.children if c.type in ("text", "code_inline")))
    return rows


def _one_line(text: str) -> str:
    return " ".join(re.sub(RAW_CONTROLS, " ", text).split())


def _shape(value, path=()) -> set[tuple]:
    """Every key path of a parsed document (list items by position): its structure without its text."""
    if isinstance(value, dict):
        return {path} | {p for k, v in value.items() for p in _shape(v, (*path, k))}
    if isinstance(value, list):
        return {path} | {p for i, v in enumerate(value) for p in _shape(v, (*path, i))}
    return {path}


def _strings(value) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _without_ids(text: str) -> str:
    """SPDX element ids (and the digest) follow the factsheet's bytes: the same shape either way."""
    return re.sub(r"urn:llm-factsheet:[0-9a-f]+:", "urn:", re.sub(r"[0-9a-f]{64}", "digest", text))


def _assert_same_structure(honest: Path, hostile: Path, fmt: str, carried: list[str], sheet=None) -> None:
    """`hostile` is `honest` with other text: same structure, no raw markup or control character, and each
    carried value back exactly (in the front matter or the JSON; the card's body shows it on one line)."""
    assert not RAW_CONTROLS.findall(hostile.read_text()), RAW_CONTROLS.findall(hostile.read_text())
    if fmt == "hf":
        (meta, body), (meta0, body0) = _card(hostile), _card(honest)
        assert _shape(meta) == _shape(meta0)
        assert _blocks(body) == _blocks(body0)  # no block, heading, table row or cell added or lost
        assert _raw_html(body) == []  # no comment hides anything, no element is injected
        strings = _strings(meta) + _texts(body)
        for value in carried:
            assert any(value in s or _one_line(value) in s for s in strings), value
        if sheet is not None:  # each row of the results table: its figure's name and what it was measured on
            figures = headline_figures(sheet) + accuracy_figures(sheet) + serving_figures(sheet)
            assert [(r[0], r[-1]) for r in _table(body)] == [(f.label, _one_line(f.slice)) for f in figures]
    else:
        raw = hostile.read_text()
        data, data0 = json.loads(raw), json.loads(_without_ids(honest.read_text()))
        assert _shape(json.loads(_without_ids(raw))) == _shape(data0)
        assert "</" not in raw and "<!--" not in raw  # safe to embed in an HTML page's <script>
        for value in carried:
            assert any(value in s for s in _strings(data)), value


def _base():
    """The honest factsheet with every free-text field the tests fill set to plain text (a licence that is
    not an SPDX id, as the hostile ones are not: the card then names it under `license_name`)."""
    plain = {path: f"{field} plain text" for field, path in PROSE.items()}
    return with_text(honest_sheet(), {**plain, NAMES["identity.license"]: "Test Licence 1.0"})


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    folder = tmp_path_factory.mktemp("honest")
    return {fmt: _export(folder, _base(), fmt) for fmt in WRITERS}


@pytest.fixture(scope="module")
def honest_empty(tmp_path_factory):
    folder = tmp_path_factory.mktemp("honest-empty")
    return {fmt: _export(folder, empty_sheet(), fmt) for fmt in WRITERS}


def _carried(fmt: str, fields: dict[str, str]) -> list[str]:
    """The values an export carries (the others it leaves out by design, e.g. intended use in the card)."""
    left_out = {
        "hf": {"identity.intended_use", "identity.out_of_scope", "identity.owner"},
        "cyclonedx": {
            "name", "identity.owner", "identity.license", "identity.out_of_scope", "provenance.tool_version",
            "accuracy.result.dataset.name", "accuracy.result.dataset.version", "load.reason", "accuracy.reason",
            "energy.reason",
        },
        "spdx": {
            "identity.owner", "identity.license", "accuracy.result.dataset.name", "accuracy.result.dataset.version",
            "energy.energy.total.boundary", "load.reason", "accuracy.reason", "energy.reason",
        },
    }[fmt]  # fmt: skip
    return [value for field, value in fields.items() if field not in left_out]


@pytest.mark.parametrize("fmt", WRITERS)
@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_prose_stays_text(tmp_path, honest, fmt, kind):
    fields = {field: f"{field} {HOSTILE[kind]}" for field in PROSE}
    sheet = with_text(_base(), {PROSE[f]: v for f, v in fields.items()})
    _assert_same_structure(honest[fmt], _export(tmp_path, sheet, fmt), fmt, _carried(fmt, fields), sheet)


@pytest.mark.parametrize("fmt", WRITERS)
@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_reasons_stay_text(tmp_path, honest_empty, fmt, kind):
    fields = {field: f"{field} {HOSTILE[kind]}" for field in REASONS}
    sheet = with_text(empty_sheet(), {REASONS[f]: v for f, v in fields.items()})
    _assert_same_structure(honest_empty[fmt], _export(tmp_path, sheet, fmt), fmt, _carried(fmt, fields))


@pytest.mark.parametrize("fmt", WRITERS)
@pytest.mark.parametrize("kind", ONE_LINE)
def test_hostile_names_stay_text(tmp_path, honest, fmt, kind):
    fields = {field: f"{field} {ONE_LINE[kind]}" for field in NAMES}
    sheet = with_text(_base(), {NAMES[f]: v for f, v in fields.items()})
    path = _export(tmp_path, sheet, fmt)
    _assert_same_structure(honest[fmt], path, fmt, _carried(fmt, fields), sheet)
    if fmt == "hf":  # the card's title is the model's name and version, exactly
        ident = sheet.identity
        assert _texts(_card(path)[1])[0] == f"{ident.name} {ident.version}"


def test_the_issues_forged_results_table_does_not_show(tmp_path, honest):
    """The reported case, through the command: the real table shows, the forged one is text in the title."""
    sheet = with_text(_base(), {("identity", "name"): "Mock-7B" + FORGED_TABLE})
    result = runner.invoke(
        app, ["export", str(write(tmp_path / "in", sheet)), "-f", "hf", "-o", str(tmp_path / "out")]
    )
    card = tmp_path / "out" / "README.md"
    # Refused, or written with the table intact: never a card whose results a comment hides.
    if result.exit_code == 0:
        _assert_same_structure(honest["hf"], card, "hf", [], sheet)
    else:
        assert result.exit_code == 2 and not card.exists(), result.output
        assert "identity.name" in result.output and len(result.output.strip().splitlines()) == 1, (
            result.output
        )


@pytest.mark.parametrize(
    ("field", "fmt"),
    [(field, "hf") for field in NAMES] + [("identity.name", "cyclonedx"), ("identity.name", "spdx")],
)
@pytest.mark.parametrize("kind", ["comment", "yaml break", "control"])
def test_a_name_with_a_control_character_is_refused(tmp_path, field, fmt, kind):
    """A name is one line of visible text: a line break or control character in it is refused (exit 2, one
    line naming the field), as any rewriting would publish a name the factsheet does not state."""
    sheet = with_text(honest_sheet(), {NAMES[field]: "Mock-7B " + HOSTILE[kind]})
    out = tmp_path / "out"
    result = runner.invoke(app, ["export", str(write(tmp_path / "in", sheet)), "-f", fmt, "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert field in result.output and len(result.output.strip().splitlines()) == 1, result.output
    assert "Traceback" not in result.output and not out.exists()
