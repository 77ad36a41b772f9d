"""Reading the raw records a factsheet names (their digests are checked before, by `check_records`), and
checking the header that binds each file to its context (schema >= 1.2.0)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from factsheet.binding import Context, context_digest
from factsheet.rederive.compare import Discrepancy
from factsheet.schema import RecordsFile
from probes.records_header import RecordsHeader, split_header

T = TypeVar("T")


@dataclass
class Binding:
    """How the records files of one factsheet are bound to their contexts, gathered as they are read.

    `required`: the document's schema binds every records file (>= 1.2.0). An older document's files carry
    no header and are read unbound (listed in `unbound`); but once one of its files carries a header, a
    file without one had its header removed, and is held to it too (see `missing`)."""

    required: bool
    bound: list[str] = field(default_factory=list)
    unbound: list[tuple[str, str]] = field(default_factory=list)  # (figure, records path)

    def missing(self) -> list[Discrepancy]:
        if not (self.required or self.bound):
            return []
        why = "schema >= 1.2.0" if self.required else "the factsheet's other records files are bound"
        return [
            Discrepancy(
                figure=figure,
                stated=f"records {path}",
                recomputed=f"no context header ({why}: records must name the context they were measured in)",
                source=path,
            )
            for figure, path in self.unbound
        ]


def read_records(
    folder: Path,
    rec: RecordsFile,
    parse: Callable[[dict], T],
    figure: str,
    context: Context | None = None,
    binding: Binding | None = None,
) -> tuple[list[T] | None, list[Discrepancy]]:
    """The records of `rec`, one per JSON line after its header; or none and why they cannot back any
    figure. With a `binding`, the header must name `context` (the one the factsheet states for `figure`;
    None: it states none the records could belong to)."""
    try:
        data = (folder / rec.path).read_bytes()
        header, lines = split_header(data)
        records = [parse(json.loads(line)) for line in lines]
    except OSError as exc:
        return None, [Discrepancy(figure=figure, stated=rec.path, recomputed=f"unreadable: {exc.strerror}")]
    except (ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        return None, [Discrepancy(figure=figure, stated=rec.path, recomputed=f"malformed records: {first}")]
    # A binding failure is reported and the figures are still recomputed: whatever else differs is named too.
    problems = [] if binding is None else _bind(header, context, binding, rec, figure)
    if len(records) != rec.records:
        problems.append(
            Discrepancy(
                figure=f"{figure}.records", stated=rec.records, recomputed=len(records), source=rec.path
            )
        )
    return records, problems


def _bind(
    header: RecordsHeader | None, context: Context | None, binding: Binding, rec: RecordsFile, figure: str
) -> list[Discrepancy]:
    if header is None:
        binding.unbound.append((figure, rec.path))
        return []
    binding.bound.append(figure)
    if context is None:
        return [
            Discrepancy(
                figure=figure,
                stated="no context these records could belong to",
                recomputed=f"records bound to a {header.role} ({header.context_sha256})",
                source=rec.path,
            )
        ]
    expected = context_digest(context)
    if header.role == context.role and header.context_sha256 == expected:
        return []
    return [
        Discrepancy(
            figure=figure,
            stated=f"{context.role} {expected} ({_what(context.role)}, as the factsheet states them)",
            recomputed=f"records bound to a {header.role} {header.context_sha256} (another context)",
            source=rec.path,
        )
    ]


def _what(role: str) -> str:
    return {
        "load point": "label, settings, SLO and start time",
        "capacity step": "knob, value, place in the probing order, probe or confirmation, template, SLO",
        "accuracy": "benchmark, dataset, tasks and sampling",
        "energy counters": "window, idle window and the load point covered",
    }.get(role, role)
