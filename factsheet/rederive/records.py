"""Reading the raw records a factsheet names (their digests are checked before, by `check_records`), and
checking the header that binds each file to its context."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from factsheet.binding import Context, context_digest, parse_header
from factsheet.document.rules import rule
from factsheet.document.schema import RecordsFile
from factsheet.document.versions import SchemaVersionError, parse
from factsheet.rederive.compare import Discrepancy, differences
from factsheet.untrusted.reading import read_records_file
from probes.core.errors import InputError
from probes.core.records_header import parse_record_line, split_header

T = TypeVar("T")


@dataclass
class Binding:
    """How the records files of one factsheet are bound to their contexts, gathered as they are read.

    `required`: the document's schema binds every records file. An older document's files carry
    no header and are read unbound (listed in `unbound`); but once one of its files carries a header, a
    file without one had its header removed, and is held to it too (see `missing`)."""

    required: bool
    bound: list[str] = field(default_factory=list)
    unbound: list[tuple[str, str]] = field(default_factory=list)  # (figure, records path)
    # (records path, the schema its writer had, how the file shows it): a header's `schema_version`,
    # or what only a tool of that schema writes in a record.
    writers: list[tuple[str, str, str]] = field(default_factory=list)

    def relabelled(self, stated: str) -> list[Discrepancy]:
        """The document's version against its records' writer's (records/writer): a lower one is a relabel
        by someone other than the tool that wrote them (a build stated at an older version drops every check its version added)."""
        mine = parse(stated)
        for path, version, how in self.writers:
            try:
                lower = parse(version, f"{path}: header schema_version") > mine
            except SchemaVersionError as exc:
                return [Discrepancy(figure="schema_version", stated=stated, recomputed=str(exc), source=path)]
            if lower:
                return [
                    Discrepancy(
                        figure="schema_version",
                        stated=stated,
                        recomputed=f"{version}, the writer's, by {how}",
                        source=path,
                    )
                ]
        return []

    def missing(self) -> list[Discrepancy]:
        if not (self.required or self.bound):
            return []
        why = "rule records/bound" if self.required else "the factsheet's other records files are bound"
        return [
            Discrepancy(
                figure=figure,
                stated=f"records {path}",
                recomputed=f"no context header ({why}: records must name the context they were measured in)",
                source=path,
            )
            for figure, path in self.unbound
        ]


@dataclass(frozen=True)
class Expected:
    """The context the factsheet states for a records file (None: it states none the records could
    belong to), and where each of its top-level fields is stated in factsheet.json, to name a mismatch."""

    context: Context | None
    fields: dict[str, str] = field(default_factory=dict)


def read_records(
    folder: Path,
    rec: RecordsFile,
    parse: Callable[[dict], T],
    figure: str,
    expected: Expected | None = None,
    binding: Binding | None = None,
) -> tuple[list[T] | None, list[Discrepancy]]:
    """The records of `rec`, one per JSON line after its header; or none and why they cannot back any
    figure. With a `binding`, the header must bind them to the `expected` context."""
    try:
        data = read_records_file(folder, rec.path)  # confined, bounded, depth-checked (factsheet.untrusted)
        header, lines = split_header(data)
        records = [parse(parse_record_line(line)) for line in lines]
    except OSError as exc:
        return None, [Discrepancy(figure=figure, stated=rec.path, recomputed=f"unreadable: {exc.strerror}")]
    except InputError:  # refused before parsing (outside the folder, too big, too deep): exit 2, not a figure
        raise
    except (ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        return None, [Discrepancy(figure=figure, stated=rec.path, recomputed=f"malformed records: {first}")]
    # A binding failure is reported and the figures are still recomputed: whatever else differs is named too.
    problems = [] if binding is None else _bind(header, expected or Expected(None), binding, rec, figure)
    if binding is not None and any(getattr(r, "outcome", None) is not None for r in records):
        binding.writers.append((rec.path, rule("replies/outcome").began, "its records' outcomes"))
    if len(records) != rec.records:
        problems.append(
            Discrepancy(
                figure=f"{figure}.records", stated=rec.records, recomputed=len(records), source=rec.path
            )
        )
    return records, problems


def _bind(
    line: bytes | None, expected: Expected, binding: Binding, rec: RecordsFile, figure: str
) -> list[Discrepancy]:
    if line is None:
        binding.unbound.append((figure, rec.path))
        return []
    binding.bound.append(figure)
    try:
        header = parse_header(line)
    except ValueError as exc:  # pydantic's ValidationError included
        first = str(exc).splitlines()[0]
        return [Discrepancy(figure=figure, stated=rec.path, recomputed=f"malformed header: {first}")]
    if header.schema_version is not None:
        binding.writers.append((rec.path, header.schema_version, "its header"))
    if header.context_sha256 != context_digest(header.context) or header.role != header.context.role:
        return [
            Discrepancy(
                figure=figure,
                stated=f"header digest {header.context_sha256}",
                recomputed=f"{context_digest(header.context)}, the digest of the context it states (altered)",
                source=rec.path,
            )
        ]
    context = expected.context
    if context is None:
        return [
            Discrepancy(
                figure=figure,
                stated="no context these records could belong to",
                recomputed=f"records of a {header.role} ({header.context_sha256})",
                source=rec.path,
            )
        ]
    if header.context_sha256 == context_digest(context):
        return []
    if header.role != context.role:
        return [
            Discrepancy(
                figure=figure,
                stated=f"records of a {context.role}",
                recomputed=f"records of a {header.role} ({header.context_sha256})",
                source=rec.path,
            )
        ]
    # Name each stated field the records were not measured under.
    source = f"{rec.path}: the context its records were measured in"
    found = [
        d.model_copy(update={"figure": _stated_at(d.figure, expected.fields, figure)})
        for d in differences(context, header.context, "", source)
    ]
    return found or [
        Discrepancy(
            figure=figure,
            stated=context_digest(context),
            recomputed=f"records bound to {header.context_sha256}",
            source=rec.path,
        )
    ]


def _stated_at(path: str, fields: dict[str, str], figure: str) -> str:
    """`.point.concurrency` (a path in the context) as where the factsheet states it."""
    rest = path.lstrip(".")
    key = rest.split(".", 1)[0].split("[", 1)[0]
    where = fields.get(key)
    if where is None:
        return f"{figure} (context: {rest})"
    return where + rest[len(key) :]
