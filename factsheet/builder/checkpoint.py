"""Checkpoints of a build: each measurement saved in the output folder as soon as it exists, with the
digests of what it depends on, so `factsheet build --resume` can reuse it instead of measuring again.

A checkpoint is `measurements/<name>.json`: `{"key": {...digests...}, "value": <the measurement>}`.
The key holds the sha256 of the spec section the measurement was made under and of the target's
identity (the target section and the digests of the weights served). A checkpoint is reused only when
its key equals the one this build computes and every raw-records file it names is present with its
sha256; anything else is measured again. Without --resume the output folder must be empty or absent:
a build never overwrites an earlier one unasked (factsheet.builder.output_folder.prepare_output).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from factsheet.binding import Context
from factsheet.builder.output_folder import OutputDir
from factsheet.document.files import MEASUREMENTS_DIR, RECORDS_DIR
from factsheet.document.schema import RecordsFile
from probes.core.digests import sha256_bytes
from probes.core.files import write_atomic
from probes.core.records_header import split_header

__all__ = ["Checkpoints", "Key"]

T = TypeVar("T")
Key = dict[str, str]


class Checkpoints:
    """Save measurements with their keys; with `resume`, hand back the ones whose key still matches."""

    def __init__(self, out: OutputDir, *, resume: bool, log: Callable[[str], None]):
        self.out, self.resume, self.log = out, resume, log
        self.reused: list[str] = []
        self.measured: list[str] = []
        self._kept: set[str] = set()  # files this build wrote or reused (the rest are stale)

    def path(self, name: str) -> Path:
        return self.out.root / MEASUREMENTS_DIR / f"{name}.json"

    def reuse(self, name: str, key: Key, kind: type[T] | object, label: str) -> T | None:
        """The checkpointed value of `name` if resuming and its key and raw records are unchanged."""
        if not self.resume:
            return None
        why = None
        try:
            saved = json.loads(self.path(name).read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            why = f"unreadable ({exc.__class__.__name__})"
            saved = {}
        if why is None and saved.get("key") != key:
            changed = sorted(k for k in key if (saved.get("key") or {}).get(k) != key[k])
            why = f"{' and '.join(changed) or 'its key'} changed"
        value = None
        if why is None:
            try:
                value = TypeAdapter(kind).validate_python(saved.get("value"))
            except ValidationError:
                why = "does not match this tool version's schema"
        if why is None:
            why = self._records_problem(value)
        if why is not None:
            self.log(f"resume: {label} measured again ({why})")
            return None
        self.log(f"resume: reused {label} from {self.path(name).relative_to(self.out.root)}")
        self.reused.append(label)
        self._keep(name, value)
        return value

    def save(self, name: str, key: Key, value: BaseModel | list, label: str | None = None) -> None:
        kind = type(value)
        data = TypeAdapter(kind).dump_python(value, mode="json")
        blob = json.dumps({"key": key, "value": data}, indent=2).encode()
        write_atomic(self.path(name), blob)
        if label is not None:
            self.measured.append(label)
        self._keep(name, value)

    def records(self, name: str, data: bytes, count: int, context: Context) -> RecordsFile:
        rf = self.out.records(name, data, count, context)
        self._kept.add(rf.path)
        return rf

    def remove_stale(self) -> list[str]:
        """After a resumed build: delete checkpoints and raw records no part of this factsheet uses."""
        removed = []
        for folder in (MEASUREMENTS_DIR, RECORDS_DIR):
            for path in sorted((self.out.root / folder).glob("*")):
                rel = f"{folder}/{path.name}"
                if path.is_file() and rel not in self._kept and not path.name.startswith("."):
                    path.unlink()
                    removed.append(rel)
        return removed

    def summary(self) -> str:
        if not self.reused:
            return "resume: nothing reused; everything was measured in this run"
        return f"resume: reused {len(self.reused)} measurement(s): {', '.join(self.reused)}"

    def _keep(self, name: str, value: object) -> None:
        self._kept.add(f"{MEASUREMENTS_DIR}/{name}.json")
        self._kept.update(rf.path for rf in _records_of(value))

    def _records_problem(self, value: object) -> str | None:
        for rf in _records_of(value):
            path = self.out.root / rf.path
            try:
                data = path.read_bytes()
            except OSError:
                return f"its raw records {rf.path} are missing"
            if sha256_bytes(data) != rf.sha256:
                return f"its raw records {rf.path} do not match their sha256"
            if (
                split_header(data)[0] is None
            ):  # an older tool's checkpoint: its records are not bound to their context
                return f"its raw records {rf.path} carry no context header (an older build)"
        return None


def _records_of(value: object) -> list[RecordsFile]:
    """Every RecordsFile a checkpointed value names (fields of models, items of lists)."""
    if isinstance(value, RecordsFile):
        return [value]
    if isinstance(value, BaseModel):
        return [rf for name in type(value).model_fields for rf in _records_of(getattr(value, name))]
    if isinstance(value, list | tuple):
        return [rf for v in value for rf in _records_of(v)]
    return []
