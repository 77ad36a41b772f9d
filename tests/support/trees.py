"""JSON trees edited as a forger (or an older tool) would."""

from __future__ import annotations


def drop_keys(tree: object, keys: set[str]) -> None:
    """Every `keys` entry removed wherever it is in `tree`."""
    if isinstance(tree, dict):
        for key in keys & tree.keys():
            del tree[key]
        for value in tree.values():
            drop_keys(value, keys)
    elif isinstance(tree, list):
        for value in tree:
            drop_keys(value, keys)
