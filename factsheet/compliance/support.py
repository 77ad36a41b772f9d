"""What the raw records support: every figure re-derived (`factsheet.rederive`) and every records file checked
against its digest, before any rule or comparison is decided on a figure.

A decision (a rule's outcome in `check`, a row of `diff`) rests on a figure only when the records give that
figure: a figure they contradict cannot pass, one whose records are missing cannot be vouched for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from factsheet.compliance.evidence import RecordsCheck, check_file
from factsheet.compliance.paths import Resolved, parse
from factsheet.document.schema import Factsheet, RecordsFile
from factsheet.rederive import Discrepancy, rederive
from probes.core.measurement import NotMeasured

NOT_SUPPORTED = "not supported by its records"


@dataclass(frozen=True)
class Unsupported:
    """One figure (or a part of the sheet, for a records file) the records do not support."""

    discrepancy: Discrepancy
    scope: str  # the figure's path, or the part of the sheet a records file backs (`load.points[0]`)
    missing: bool  # the records are absent (nothing to re-derive from), not contradicting the figure

    def describe(self) -> str:
        return self.discrepancy.describe()


@dataclass(frozen=True)
class Support:
    """Every records file's status and every figure the records do not support, for one sheet and folder."""

    files: list[RecordsCheck]
    problems: list[Unsupported]

    @property
    def contradicted(self) -> list[Unsupported]:
        return [u for u in self.problems if not u.missing]

    def of(self, path: str) -> list[Unsupported]:
        """The problems touching the figure at `path` (with list indexes, as `concrete_path` gives): on the
        figure itself, on a part of it, or on the records file behind the part of the sheet holding it."""
        return [u for u in self.problems if _overlaps(u.scope, path)]


def reasons(found: list[Unsupported], most: int = 3) -> str:
    """`not supported by its records: <discrepancy>; ...` (the first few, then how many more)."""
    return f"{NOT_SUPPORTED}: {listing(found, most)}"


def listing(found: list[Unsupported], most: int = 3) -> str:
    text = "; ".join(u.describe() for u in found[:most])
    return text + (f"; and {len(found) - most} more" if len(found) > most else "")


def _overlaps(a: str, b: str) -> bool:
    return _within(a, b) or _within(b, a)


def _within(inner: str, outer: str) -> bool:
    return inner == outer or (inner.startswith(outer) and inner[len(outer)] in ".[")


def records_files(sheet: Factsheet) -> list[tuple[str, RecordsFile]]:
    """Each records file with the part of the sheet it backs, named as `rederive` names its figures."""
    out: list[tuple[str, RecordsFile]] = []
    if not isinstance(sheet.load, NotMeasured):
        out += [(f"load.points[{i}]", e.records) for i, e in enumerate(sheet.load.points)]
        if not isinstance(sheet.load.capacity, NotMeasured):
            # One search: a probe's records decide the verdicts and the answer of the whole search.
            out += [("load.capacity", rec) for rec in sheet.load.capacity.records]
    if not isinstance(sheet.accuracy, NotMeasured):
        out.append(("accuracy", sheet.accuracy.records))
    if not isinstance(sheet.energy, NotMeasured) and sheet.energy.records is not None:
        out.append(("energy", sheet.energy.records))
    return out


def support(sheet: Factsheet, folder: Path | None) -> Support:
    """Digests first (a missing or altered file leaves the part it backs unsupported), then every figure
    re-derived from the records (`folder` None: no records at hand, every records-backed figure missing)."""
    files, problems, flagged = [], [], set()
    for scope, rec in records_files(sheet):
        check = check_file(folder, rec)
        files.append(check)
        if check.status == "verified":
            continue
        missing = check.status != "mismatch"
        found = "missing" if missing else "altered (its sha256 differs from the factsheet's)"
        d = Discrepancy(figure=f"{scope}.records", stated=rec.path, recomputed=found, source=rec.path)
        problems.append(Unsupported(d, scope, missing))
        flagged.add(scope)
    if folder is not None:
        for d in rederive(sheet, Path(folder)):
            scope = _records_scope(d.figure)
            if scope is not None and any(_within(scope, f) for f in flagged):
                continue  # the file is already named missing or altered
            problems.append(Unsupported(d, scope or d.figure, False))
    return Support(files, problems)


_RECORDS = re.compile(r"\.records(?=$|[.\[])")


def _records_scope(figure: str) -> str | None:
    """`load.points[0].records.records` -> `load.points[0]`: a records file's problem covers its part."""
    m = _RECORDS.search(figure)
    return figure[: m.start()] if m and m.start() else None


def concrete_path(r: Resolved) -> str:
    """A resolved policy path with each selector (`[headline]`, `[concurrency=4]`) replaced by the index it
    selected, as `rederive` names figures (`load.points[0].result...`)."""
    parts, trail = [], iter(r.trail)
    for seg in parse(r.path):
        if seg.selector is None:
            next(trail, None)
            parts.append(seg.name)
            continue
        _, items = next(trail, (None, None))
        _, item = next(trail, (None, None))
        index = next((i for i, x in enumerate(items or ()) if x is item), None)
        parts.append(f"{seg.name}[{seg.selector if index is None else index}]")
    return ".".join(parts)
