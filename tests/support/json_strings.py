"""Every string of a parsed JSON document, keys included: what the no-machine-path checks scan."""

from __future__ import annotations

from collections.abc import Iterator


def json_strings(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from json_strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from json_strings(value)
