"""Readable field paths over a factsheet: `load.points[concurrency=4].result.metrics.e2el_ms.percentiles.p99`.

A path is dotted names; a list is entered with `[N]` (index), `[headline]` (the headline load point) or
`[LABEL]` (the item whose label is LABEL: a load point's `concurrency=4`, a capacity point's value).
`load.points[headline].result.metrics…` is page 1's run (rule gate/page-one, `page_one_path`): the capacity's
last confirmation run when there is one, so a gate judges the figure page 1 states.
Paths are checked against the factsheet's JSON Schema when a policy is loaded (a renamed field is a bad
policy, found before anything runs), then resolved over a factsheet, where any section on the way may be
"not measured" with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel

from factsheet.document.headline.select import informative_run
from factsheet.document.rules import rule_set
from factsheet.document.schema import Factsheet, headline_index
from factsheet.untrusted.limits import MAX_INDEX_DIGITS
from probes.core.errors import InputError
from probes.core.measurement import NotMeasured

HEADLINE = "headline"


class PathError(InputError):
    """A path that is malformed or names no field of the factsheet schema."""


@dataclass(frozen=True)
class Segment:
    name: str
    selector: str | None = None

    def __str__(self) -> str:
        return self.name if self.selector is None else f"{self.name}[{self.selector}]"


def _short(text: str, keep: int = 80) -> str:
    """A path quoted in a message, cut short: an error line must stay one readable line."""
    return repr(text) if len(text) <= keep else repr(text[:keep]) + f"… ({len(text):,} characters)"


def parse(path: str) -> list[Segment]:
    """Split on dots outside brackets; a selector may hold dots and spaces (`rate=2.5/s (constant)`)."""
    if not isinstance(path, str) or not path.strip():
        raise PathError("a field path must be a non-empty string")
    parts, buf, depth = [], "", 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise PathError(f"path {_short(path)}: unbalanced ']'")
        if ch == "." and depth == 0:
            parts.append(buf)
            buf = ""
        else:
            buf += ch
    if depth:
        raise PathError(f"path {_short(path)}: unbalanced '['")
    parts.append(buf)
    segments = []
    for part in parts:
        name, sep, rest = part.partition("[")
        if not name or (sep and (not rest.endswith("]") or "[" in rest[:-1] or not rest[:-1].strip())):
            raise PathError(f"path {_short(path)}: malformed segment {_short(part)}")
        index = rest[:-1].strip().lstrip("-")
        if sep and index.isdecimal() and len(index) > MAX_INDEX_DIGITS:
            # no list of a factsheet is that long; Python cannot even convert 4,300+ digits to an int
            raise PathError(
                f"path {_short(path)}: index of {len(index):,} digits (at most {MAX_INDEX_DIGITS})"
            )
        segments.append(Segment(name, rest[:-1].strip() if sep else None))
    return segments


# --- checking against the schema -------------------------------------------------------------------


@cache
def _factsheet_schema() -> dict:

    return Factsheet.model_json_schema(mode="serialization")


def check_path(path: str) -> list[Segment]:
    """The parsed path, or PathError naming the first segment the factsheet schema does not have."""
    segments = parse(path)
    root = _factsheet_schema()
    if not _walk(root, root, segments):
        raise PathError(f"{path!r} names no field of the factsheet schema ({_first_bad(root, segments)})")
    return segments


def _first_bad(root: dict, segments: list[Segment]) -> str:
    for i in range(1, len(segments) + 1):
        if not _walk(root, root, segments[:i]):
            return f"no '{segments[i - 1]}' after '{'.'.join(map(str, segments[: i - 1])) or '(top)'}'"
    return "?"


def _deref(root: dict, node: dict) -> dict:
    while "$ref" in node:
        node = root["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _walk(root: dict, node: dict, segments: list[Segment]) -> bool:
    node = _deref(root, node)
    if not segments:
        return True
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            return any(_walk(root, branch, segments) for branch in node[key])
    seg, rest = segments[0], segments[1:]
    props = node.get("properties", {})
    if seg.name in props:
        child = props[seg.name]
    elif isinstance(node.get("additionalProperties"), dict):
        child = node["additionalProperties"]
    elif (
        node.get("type") in (None,)
        and not props
        and "additionalProperties" not in node
        and "items" not in node
    ):
        return True  # an untyped value (Any): nothing more to check
    else:
        return False
    if seg.selector is None:
        return _walk(root, child, rest)
    return _walk_items(root, child, rest)


def _walk_items(root: dict, node: dict, rest: list[Segment]) -> bool:
    node = _deref(root, node)
    for key in ("anyOf", "oneOf"):
        if key in node:
            return any(_walk_items(root, branch, rest) for branch in node[key])
    if node.get("type") != "array":
        return False
    if "items" in node and node["items"] is not False:
        return _walk(root, node["items"], rest)
    return any(_walk(root, item, rest) for item in node.get("prefixItems", []))


# --- resolving over a factsheet --------------------------------------------------------------------


@dataclass
class Resolved:
    """A path's value with the objects it passed through (the evidence a figure rests on is found there)."""

    path: str
    value: Any = None
    trail: list[tuple[str, Any]] = field(default_factory=list)
    not_measured: str | None = None  # the factsheet's own reason
    missing: str | None = None  # the path leads to no value in this factsheet (an absent item, a null)

    @property
    def ok(self) -> bool:
        return self.not_measured is None and self.missing is None


_HEADLINE_METRICS = f"load.points[{HEADLINE}].result.metrics"
_CAPACITY_RUN = "/load/capacity/result/points/"


def page_one_path(sheet: BaseModel, path: str) -> str:
    """`load.points[headline].result.metrics…` as the run page 1 states it: the capacity's last confirmation
    run (`load.capacity.result.points[i].metrics…`) when page 1 states one (informative_run, the one place
    that choice is made), so a gate never judges a sweep point's p99 beside page 1's confirmation run's
    (issue 42). Any other path, or a document judged by rule gate/headline-point (whose gate judged the headline load
    point, and whose re-check must judge the same), is returned as given."""
    if not (path == _HEADLINE_METRICS or path.startswith(_HEADLINE_METRICS + ".")):
        return path
    if not isinstance(sheet, Factsheet) or "gate/page-one" not in rule_set(sheet.schema_version):
        return path
    run = informative_run(sheet.load)
    if run is None or not run.pointer.startswith(_CAPACITY_RUN):
        return path
    index = run.pointer[len(_CAPACITY_RUN) :]
    return f"load.capacity.result.points[{index}].metrics{path[len(_HEADLINE_METRICS) :]}"


def resolve(sheet: BaseModel, path: str) -> Resolved:
    path = page_one_path(sheet, path)
    out = Resolved(path=path)
    node: Any = sheet
    walked = ""
    for seg in parse(path):
        node = _child(node, seg.name)
        walked = f"{walked}.{seg.name}" if walked else seg.name
        if node is _ABSENT:
            out.missing = f"{walked} has no value in this factsheet"
            return out
        if isinstance(node, NotMeasured):
            out.not_measured = f"{walked}: not measured — {node.reason}"
            return out
        if seg.selector is not None:
            if not isinstance(node, list | tuple):
                out.missing = f"{walked} is not a list"
                return out
            index = _select(node, seg.selector, walked, sheet)
            walked = f"{walked}[{seg.selector}]"
            if index is None:
                out.missing = f"{walked}: no such item in this factsheet"
                return out
            out.trail.append((walked, node))
            node = node[index]
            if isinstance(node, NotMeasured):
                out.not_measured = f"{walked}: not measured — {node.reason}"
                return out
        out.trail.append((walked, node))
    if node is None:
        out.missing = f"{walked} is empty (null) in this factsheet"
    out.value = node
    return out


_ABSENT = object()


def _child(node: Any, name: str) -> Any:
    if isinstance(node, BaseModel):
        return getattr(node, name, _ABSENT) if name in type(node).model_fields else _ABSENT
    if isinstance(node, dict):
        return node.get(name, _ABSENT)
    return _ABSENT


def _select(items: list | tuple, selector: str, walked: str, sheet: BaseModel) -> int | None:
    if selector.lstrip("-").isdecimal():  # not isdigit: int() refuses "²", which isdigit accepts
        i = int(selector)
        return i % len(items) if -len(items) <= i < len(items) else None
    if selector == HEADLINE:
        if walked != "load.points":
            raise PathError(f"[{HEADLINE}] selects a load point: only load.points[{HEADLINE}] is defined")

        return None if isinstance(sheet.load, NotMeasured) else headline_index(sheet.load.points)
    for i, item in enumerate(items):
        if selector in _labels(item):
            return i
    return None


def _labels(item: Any) -> set[str]:
    labels = set()
    for name in ("label", "name", "knob"):
        v = _child(item, name)
        if isinstance(v, str):
            labels.add(v)
    result = _child(item, "result")
    if result is not _ABSENT and isinstance(_child(result, "label"), str):
        labels.add(result.label)
    value = _child(item, "value")
    if isinstance(value, int | float) and not isinstance(value, bool):
        labels |= {f"{value:g}", str(value)}
    return labels
