"""The first line of a raw-records file (older files have none): a JSON object with the
single key `header`, which no record has, binding the records to the context they were measured in.

Only its place and shape are known here, so that every reader of a records file, probes included, can step
over it; what it holds (the context and its digest) is the factsheet's business (factsheet/binding).
"""

from __future__ import annotations

import json
import math

HEADER_KEY = "header"


def split_header(data: bytes) -> tuple[bytes | None, list[bytes]]:
    """The header line (None for an older file, written without one) and the record lines after it."""
    lines = [line for line in data.splitlines() if line.strip()]
    if lines and _is_header(lines[0]):
        return lines[0], lines[1:]
    return None, lines


def _is_header(line: bytes) -> bool:
    try:
        first = json.loads(line)
    except ValueError:
        return False  # not JSON: left to the records' own parsing, which says so
    return isinstance(first, dict) and HEADER_KEY in first


def parse_record_line(line: bytes) -> object:
    """One record line as JSON, its numbers finite: `Infinity`, `NaN` or `1e400` (which Python reads as inf)
    are no measurement any probe writes, and would overflow the figures recomputed from them (ValueError)."""
    return json.loads(line, parse_constant=not_finite, parse_float=finite_float)


def not_finite(name: str) -> float:
    """json's `parse_constant`: `Infinity`, `-Infinity` and `NaN` are refused (ValueError)."""
    raise ValueError(f"{name} is not a finite number")


def finite_float(text: str) -> float:
    """json's `parse_float`: a number that overflows to inf (`1e400`) is refused (ValueError)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value
