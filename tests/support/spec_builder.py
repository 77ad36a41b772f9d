"""Build specs from dicts: a base spec plus overrides, merged and written with `yaml.safe_dump`.

Tests used to edit spec YAML text by string replacement, which silently does nothing when the text moves
(a replaced line that is no longer there is no error). Merging dicts names the key it changes, and a key
the base lacks is added rather than lost.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path

import yaml


class _Delete:
    """The override value that removes its key from the merged spec."""

    def __repr__(self) -> str:
        return "DELETE"


DELETE = _Delete()


def merged(base: Mapping, overrides: Mapping | None = None) -> dict:
    """A copy of `base` with `overrides` deep-merged into it: mappings merge key by key, lists and scalars
    replace, and `DELETE` removes the key. Neither argument is changed."""
    out = copy.deepcopy(dict(base))
    for key, value in (overrides or {}).items():
        if value is DELETE:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(_without_deletes(value))
    return out


def _without_deletes(value):
    """A value new to the base holds no key to delete: a `DELETE` in it is dropped."""
    if isinstance(value, Mapping):
        return {k: _without_deletes(v) for k, v in value.items() if v is not DELETE}
    return value


def spec_yaml(spec: Mapping) -> str:
    """The spec as YAML text, keys in the order given (the order a reader of the file expects)."""
    return yaml.safe_dump(dict(spec), sort_keys=False, allow_unicode=True)


def write_spec(path: Path, spec: Mapping) -> Path:
    """Writes `spec` as YAML to `path`; returns `path`."""
    path.write_text(spec_yaml(spec))
    return path
