"""The depth scan that runs before JSON is parsed agrees with a parser's own depth, on documents whose
strings hold brackets, quotes and runs of backslashes, scanned whole and in chunks as small as one byte
(the state carried across chunk boundaries is where such a scan goes wrong)."""

from __future__ import annotations

import json
import random

import pytest

from factsheet.untrusted.parsing import NotFinite, json_depth_exceeded, parse_json
from probes.core.untrusted import parsing  # the one bounded JSON parser (factsheet.untrusted re-exports it)

_TRICKY = ["[", "]", "{", "}", '"', "\\", "\\\\", '\\"', "a", " "]


def _document(rng: random.Random, depth: int):
    if depth == 0 or rng.random() < 0.3:
        return "".join(rng.choice(_TRICKY) for _ in range(rng.randint(0, 6)))
    children = [_document(rng, depth - 1) for _ in range(rng.randint(1, 3))]
    return children if rng.random() < 0.5 else {f"k{i}]{{": c for i, c in enumerate(children)}


def _depth(value) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_the_depth_scan_agrees_with_the_parsed_depth(chunk, monkeypatch):
    monkeypatch.setattr(parsing, "_CHUNK", chunk)
    rng = random.Random(20)
    for _ in range(300):
        doc = _document(rng, rng.randint(0, 6))
        text = json.dumps(doc).encode()
        depth = _depth(doc)
        assert json_depth_exceeded(text, depth) is None, text
        if depth:
            assert json_depth_exceeded(text, depth - 1) is not None, text


@pytest.mark.parametrize("literal", ["Infinity", "-Infinity", "NaN", "1e400", "-1e400"])
def test_non_finite_numbers_are_refused(literal):
    with pytest.raises(NotFinite, match="not a finite number"):
        parse_json(f'{{"x": [1, {literal}]}}', "doc")


def test_finite_numbers_and_strings_that_look_non_finite_are_kept():
    assert parse_json('{"x": [1e300, -2.5, "Infinity", "NaN"]}', "doc") == {
        "x": [1e300, -2.5, "Infinity", "NaN"]
    }
