"""Issue 30: free text from a factsheet in the pages the tool renders. Before the fix a U+202E in the
model's name went into the HTML raw (reversing the page's own text after it) and a 1 MB name took 53 s to
render (WeasyPrint lays a long unbroken word out in quadratic time; four such fields > 115 s). Now every
`{{ }}` of every page goes through factsheet/export/text.py's `shown_text`: such characters are shown as
their code points and text over MAX_SHOWN_CHARS is cut, saying how much is left out; the record keeps it
whole. On the frozen 1.0.0 fixture."""

from __future__ import annotations

import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from factsheet.export.text import shown_text, terminal_text
from factsheet.rederive.validate import load_factsheet
from factsheet.render.sheet import render_all, render_html
from factsheet.untrusted.limits import MAX_SHOWN_CHARS

FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0" / "factsheet.json"
RAW = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def _sheet(tmp_path: Path, **identity: str):
    doc = json.loads(FIXTURE.read_text())
    doc["identity"].update(identity)
    path = tmp_path / "factsheet.json"
    path.write_text(json.dumps(doc))
    return load_factsheet(path)


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def _text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return "".join(parser.parts)


def test_bidi_and_control_characters_in_a_name_are_shown_not_sent(tmp_path):
    name = "evil\u202ebuild 1\x1b[2J\u2066x\u2028y"
    html = render_html(_sheet(tmp_path, name=name))
    assert RAW.search(html) is None, repr(RAW.search(html))
    text = _text(html)  # parsed back: the name as a reader sees it, each character by its code point
    assert "evil<U+202E>build 1<U+001B>[2J<U+2066>x<U+2028>y" in text
    assert "\u202e" not in text


@pytest.mark.slow  # the PDF of the fixture: ~6 s of CPU, 20 s on a loaded host
def test_four_fields_of_1_mb_render_in_seconds_and_say_what_is_cut(tmp_path):
    big = {k: k[0] * 1_000_000 for k in ("name", "version", "owner", "license")}
    sheet = _sheet(tmp_path, **big)
    start = time.process_time()
    written = render_all(sheet, tmp_path / "out")
    cpu_s = time.process_time() - start
    assert cpu_s < 10, f"{cpu_s:.1f} s of CPU (over 115 s before the fix)"
    html = (tmp_path / "out" / "factsheet.html").read_text()
    assert f"… [{1_000_000 - MAX_SHOWN_CHARS:,} more characters not shown]" in html
    assert "n" * (MAX_SHOWN_CHARS + 1) not in html
    record = json.loads((tmp_path / "out" / "factsheet.json").read_text())
    assert record["identity"]["name"] == big["name"]  # the record keeps it whole
    assert len(written) == 3


def test_an_honest_name_is_shown_unchanged(tmp_path):
    html = render_html(_sheet(tmp_path, name="SmolLM2-135M-Instruct · Q4_1 (élan)"))
    assert "SmolLM2-135M-Instruct · Q4_1 (élan)" in _text(html)


def test_the_helper_cuts_and_shows_by_one_rule():
    assert shown_text("abc") == "abc"
    assert shown_text("a\tb\u202e\x0b") == "a\tb<U+202E><U+000B>"
    assert shown_text("line 1\nline 2\r\n") == "line 1\nline 2\r\n"  # HTML whitespace: kept (pre-wrap text)
    assert shown_text("x" * 10, limit=4) == "xxxx… [6 more characters not shown]"
    assert terminal_text("one\ntwo\x1b]0;title\x07\r") == "one\ntwo<U+001B>]0;title<U+0007><U+000D>"
