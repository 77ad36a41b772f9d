"""Parsing JSON from a hostile author within stated bounds (probes.core.untrusted.limits).

Nesting depth is measured *before* parsing, without recursion: a vectorised scan of the bytes (brackets
outside strings, strings found by their unescaped quotes). A document nested 100,000 deep is refused in
milliseconds instead of crashing the parser with RecursionError, which is still caught as a second line of
defence. Numbers must be finite: `Infinity`, `NaN` and `1e400` (which Python reads as inf) are refused, and
integers are at most MAX_INTEGER_DIGITS long, because a figure is finite or *not measured*. Factsheets,
records, trace lines and everything else read as JSON go through `parse_json`.
"""

from __future__ import annotations

import json

import numpy as np

from probes.core.errors import InputError
from probes.core.records_header import finite_float, not_finite
from probes.core.untrusted.limits import MAX_INTEGER_DIGITS, MAX_NESTING_DEPTH

_CHUNK = 1 << 20  # bytes scanned at once: the scan's temporaries stay ~40 MB whatever the file's size
_OPEN = np.zeros(256, dtype=np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


class TooDeep(InputError):
    """A document nested deeper than MAX_NESTING_DEPTH."""


class NotFinite(InputError):
    """A number that is not finite (or too long to be one)."""


def json_depth_exceeded(data: bytes, limit: int = MAX_NESTING_DEPTH) -> int | None:
    """The offset where JSON text `data` first nests deeper than `limit`, or None.

    A quote is a string boundary unless an odd run of backslashes precedes it; a bracket counts only
    outside strings. The scan carries its state (inside a string, depth, trailing backslashes) from one
    chunk to the next, so memory does not grow with the file."""
    in_string, depth, carried_bs = 0, 0, 0
    for start in range(0, len(data), _CHUNK):
        arr = np.frombuffer(data, dtype=np.uint8, count=min(_CHUNK, len(data) - start), offset=start)
        bs = arr == ord("\\")
        if bs.any() or carried_bs:
            idx = np.arange(arr.size, dtype=np.int64)
            last_plain = np.maximum.accumulate(np.where(bs, -1, idx))  # last non-backslash at or before i
            # backslashes immediately before i: those back to the last plain byte (plus the carried run)
            before = np.empty(arr.size, dtype=np.int64)
            before[0] = carried_bs
            before[1:] = idx[:-1] - last_plain[:-1]
            before[1:] += np.where(last_plain[:-1] < 0, carried_bs, 0)
            quote = (arr == ord('"')) & (before % 2 == 0)
            trailing = int(arr.size - 1 - last_plain[-1]) + (carried_bs if last_plain[-1] < 0 else 0)
        else:  # no escapes in this chunk (the common case): every quote is a boundary
            quote = arr == ord('"')
            trailing = 0
        inside = (np.cumsum(quote, dtype=np.int64) + in_string) % 2 == 1
        delta = np.where(inside, 0, _OPEN[arr])
        level = np.cumsum(delta, dtype=np.int64) + depth
        deep = np.flatnonzero(level > limit)
        if deep.size:
            return start + int(deep[0])
        in_string, depth = int(inside[-1]), int(level[-1])
        carried_bs = trailing
    return None


def check_json_depth(data: bytes, source: str) -> None:
    at = json_depth_exceeded(data)
    if at is not None:
        raise TooDeep(f"{source}: nested more than {MAX_NESTING_DEPTH} deep (at byte {at:,})")


def _constant(name: str) -> float:
    try:
        return not_finite(name)
    except ValueError as exc:
        raise NotFinite(f"{exc} (a figure is finite or not measured)") from None


def _float(text: str) -> float:
    try:
        return finite_float(text)
    except ValueError as exc:
        raise NotFinite(f"{exc} (a figure is finite or not measured)") from None


def _int_of_at_most(digits: int):
    def parse(text: str) -> int:
        if len(text.lstrip("-")) > digits:
            raise NotFinite(f"an integer of {len(text.lstrip('-')):,} digits (at most {digits:,})")
        return int(text)

    return parse


_int = _int_of_at_most(MAX_INTEGER_DIGITS)


def parse_json(
    data: bytes | str, source: str, *, checked_depth: bool = False, integer_digits: int = MAX_INTEGER_DIGITS
) -> object:
    """JSON text as Python objects, within the bounds; InputError naming `source` otherwise.
    `checked_depth`: the caller already scanned these bytes (one scan of a whole records file).
    `integer_digits`: a document that is not figures (a prompt file's test data) may hold longer ones."""
    if not checked_depth:
        check_json_depth(data.encode() if isinstance(data, str) else data, source)
    parse_int = _int if integer_digits == MAX_INTEGER_DIGITS else _int_of_at_most(integer_digits)
    try:
        return json.loads(data, parse_constant=_constant, parse_float=_float, parse_int=parse_int)
    except NotFinite as exc:
        raise NotFinite(f"{source}: {exc}") from None
    except RecursionError:
        raise TooDeep(f"{source}: nested too deep to parse") from None
    except ValueError as exc:
        raise InputError(f"{source}: not valid JSON: {exc}") from exc
