"""Parsing JSON and YAML from a hostile author within stated bounds (factsheet.untrusted.limits).

Nesting depth is measured *before* parsing, without recursion: for JSON a vectorised scan of the bytes
(probes.core.untrusted.parsing, shared with the probes), for YAML the parser's event stream
(the recursive part of PyYAML is the composer that follows it). A document nested 100,000 deep is refused
in milliseconds instead of crashing the parser with RecursionError, which is still caught as a second line
of defence. Numbers must be finite: `Infinity`, `NaN` and `1e400` (which Python reads as inf) are refused,
because a figure is finite or *not measured*.
"""

from __future__ import annotations

import math

import yaml

from factsheet.untrusted.limits import (
    MAX_CAPACITY_POINTS,
    MAX_LOAD_POINTS,
    MAX_NESTING_DEPTH,
    MAX_YAML_NODES,
)
from probes.core.errors import InputError

# JSON is parsed by the one bounded parser below the factsheet (trace lines and /metrics use it too).
from probes.core.untrusted.parsing import (
    NotFinite,
    TooDeep,
    check_json_depth,
    json_depth_exceeded,
    parse_json,
)

__all__ = ["NotFinite", "TooDeep", "check_json_depth", "json_depth_exceeded", "parse_json", "parse_yaml"]


def parse_yaml(data: bytes, source: str, error: type[InputError] = InputError) -> object:
    """A YAML document (safe types only) within the bounds: depth, and nodes with aliases expanded."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_yaml_events(yaml.parse(data, Loader=loader), source, error)
        doc = yaml.load(data, Loader=loader)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        raise error(f"{source}: not valid YAML: {exc}") from exc
    except RecursionError:
        raise error(f"{source}: nested too deep to parse") from None
    _check_finite(doc, source, error)
    return doc


def _check_finite(doc: object, source: str, error: type[InputError]) -> None:
    """YAML reads `.inf`, `.nan` and `1.0e400` as non-finite floats; a threshold must be finite. Walked
    with a stack, not recursion (the depth and the node count are already bounded)."""
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            raise error(f"{source}: {node} is not a finite number")
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _check_yaml_events(events, source: str, error: type[InputError]) -> None:
    """Depth and expanded size from the event stream: an alias counts as the whole subtree it repeats."""
    open_at: list[tuple[str | None, int]] = []  # (anchor, nodes counted before the collection began)
    sizes: dict[str, int] = {}
    nodes = 0
    for ev in events:
        if isinstance(ev, yaml.ScalarEvent):
            nodes += 1
            if ev.anchor:
                sizes[ev.anchor] = 1
        elif isinstance(ev, yaml.AliasEvent):
            nodes += sizes.get(ev.anchor, 1)
        elif isinstance(ev, yaml.CollectionStartEvent):
            open_at.append((ev.anchor, nodes))
            nodes += 1
            if len(open_at) > MAX_NESTING_DEPTH:
                raise error(
                    f"{source}: nested more than {MAX_NESTING_DEPTH} deep (line {ev.start_mark.line + 1})"
                )
        elif isinstance(ev, yaml.CollectionEndEvent):
            anchor, before = open_at.pop()
            if anchor:
                sizes[anchor] = nodes - before
        if nodes > MAX_YAML_NODES:
            raise error(
                f"{source}: more than {MAX_YAML_NODES:,} values once aliases are expanded "
                f"(line {ev.start_mark.line + 1})"
            )


def check_factsheet_counts(data: object, source: str) -> None:
    """Load points and capacity points within their limits, counted in the parsed JSON before it is
    validated (validating and rendering cost grows with them)."""
    load = data.get("load") if isinstance(data, dict) else None
    if not isinstance(load, dict):
        return
    points = load.get("points")
    if isinstance(points, list) and len(points) > MAX_LOAD_POINTS:
        raise InputError(
            f"{source}: load.points: {len(points):,} load points, over the limit of {MAX_LOAD_POINTS}"
        )
    capacity = load.get("capacity")
    if not isinstance(capacity, dict):
        return
    result = capacity.get("result")
    for where, items in (
        ("load.capacity.result.points", result.get("points") if isinstance(result, dict) else None),
        ("load.capacity.records", capacity.get("records")),
    ):
        if isinstance(items, list) and len(items) > MAX_CAPACITY_POINTS:
            raise InputError(
                f"{source}: {where}: {len(items):,} capacity points, over the limit of {MAX_CAPACITY_POINTS}"
            )
