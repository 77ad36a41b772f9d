"""Figures that state a measurement with nothing behind it: records a measured figure needs but the
factsheet no longer names, and one records file named for two measurements."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from factsheet.document.files import RECORDS_DIR
from factsheet.document.rules import RuleSet, rule
from factsheet.document.schema import Factsheet, RecordsFile, energy_point
from factsheet.rederive.compare import Discrepancy
from probes.core.errors import InputError
from probes.core.measurement import NotMeasured

# More entries than any build writes (64 load points and 64 capacity runs, each with its scrapes, repeats,
# accuracy, energy): the listing is refused past it before it is read whole.
MAX_RECORDS_ENTRIES = 4096


def named_records(sheet: Factsheet) -> list[tuple[str, RecordsFile]]:
    """Every records file the factsheet names, with the path of the field naming it."""
    out: list[tuple[str, RecordsFile]] = []
    if not isinstance(sheet.load, NotMeasured):
        out += [(f"load.points[{i}].records", p.records) for i, p in enumerate(sheet.load.points)]
        out += [
            (f"load.points[{i}].server_records", p.server_records)
            for i, p in enumerate(sheet.load.points)
            if p.server_records is not None
        ]
        if not isinstance(sheet.load.capacity, NotMeasured):
            out += sheet.load.capacity.named_records("load.capacity")
        for k, c in enumerate(sheet.load.compared_workloads):
            out += c.capacity.named_records(f"load.compared_workloads[{k}].capacity")
    if not isinstance(sheet.accuracy, NotMeasured):
        out.append(("accuracy.records", sheet.accuracy.records))
    if not isinstance(sheet.energy, NotMeasured) and sheet.energy.records is not None:
        out.append(("energy.records", sheet.energy.records))
    return out


def named_twice(sheet: Factsheet) -> list[Discrepancy]:
    """A records file (by path, or the same bytes under another name) backs one measurement only: a build
    writes one file per run, so a second mention reuses another run's records for figures never measured."""
    out: list[Discrepancy] = []
    by_path: dict[str, str] = {}
    by_digest: dict[str, str] = {}
    for figure, rec in named_records(sheet):
        path = posixpath.normpath(rec.path)
        first = by_path.get(path) or by_digest.get(rec.sha256)
        if first is not None:
            out.append(
                Discrepancy(
                    figure=figure,
                    stated=f"records {rec.path}",
                    recomputed=f"the same records as {first} (one file per measured run)",
                    source=rec.path,
                )
            )
            continue
        by_path[path], by_digest[rec.sha256] = figure, figure
    return out


def missing_records(sheet: Factsheet, rules: RuleSet, *, bound: bool = False) -> list[Discrepancy]:
    """Measured figures whose evidence the document's rules keep (keeps/energy-samples-and-search), but which
    it does not name. `bound`: its records carry context headers (records/bound), so a tool that kept them
    wrote them, whatever version the document states (a version lowered to escape these checks is held to
    the records' own)."""
    out: list[Discrepancy] = []
    kept = "keeps/energy-samples-and-search"
    keeps = bound or kept in rules
    since = (
        f"records bound to their contexts (schema >= {rule('records/bound').began})"
        if bound
        else f"schema {sheet.schema_version} >= {rule(kept).began}"
    )
    energy = sheet.energy
    if not isinstance(energy, NotMeasured) and not isinstance(energy.energy, NotMeasured):
        if keeps and energy.records is None:
            out.append(
                Discrepancy(
                    figure="energy.records",
                    stated="none",
                    recomputed=f"the energy counters' samples ({since} keeps them for measured energy)",
                )
            )
        points = [] if isinstance(sheet.load, NotMeasured) else sheet.load.points
        if energy_point(points) is None:
            out.append(
                Discrepancy(
                    figure="energy.energy",
                    stated="measured",
                    recomputed="no load point with a steady window for the energy to cover",
                )
            )
    load = sheet.load
    if not isinstance(load, NotMeasured) and not isinstance(load.capacity, NotMeasured):
        if keeps and load.capacity.result.search is None:
            out.append(
                Discrepancy(
                    figure="load.capacity.result.search",
                    stated="none",
                    recomputed=f"the search's parameters ({since} keeps them, so the search is replayed)",
                )
            )
    return out


def uncited_records(sheet: Factsheet, folder: Path) -> list[Discrepancy]:
    """Every entry of the folder's records/ is a file some figure cites: a build writes one file per run and
    nothing else there (a resumed build removes what it no longer uses), so a file no figure cites is a run
    the document leaves out (a failed repeat dropped with `repeats`, a probe cut from the search)."""
    root = Path(folder) / RECORDS_DIR
    if not root.is_dir():
        return []
    cited = {posixpath.normpath(rec.path) for _, rec in sheet.records_files()}
    above = {p.split("/", 2)[1] for p in cited if p.startswith(f"{RECORDS_DIR}/") and p.count("/") > 1}
    out: list[Discrepancy] = []
    with os.scandir(root) as entries:
        for n, entry in enumerate(entries):
            if n >= MAX_RECORDS_ENTRIES:
                raise InputError(
                    f"{RECORDS_DIR}: more than {MAX_RECORDS_ENTRIES:,} entries (no build writes so many)"
                )
            path = f"{RECORDS_DIR}/{entry.name}"
            if path in cited or entry.name in above:
                continue
            out.append(
                Discrepancy(
                    figure=path,
                    stated="cited by no figure",
                    recomputed="a run of this build: every records file in the folder backs a figure (one "
                    "left out hides a run)",
                    source=path,
                )
            )
    return sorted(out, key=lambda d: d.figure)
