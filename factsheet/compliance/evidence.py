"""What a figure rests on: its raw-records file (verified against the factsheet's sha256) and the samples in it.

Samples are recomputed with the load probe's own functions (steady window, latency definitions), so a
claim is judged on exactly the samples the factsheet's figure was computed from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import Field

from factsheet.document.schema import Factsheet, LoadSection, RecordsFile
from factsheet.untrusted.reading import read_records_file
from probes.core.digests import sha256_bytes
from probes.core.measurement import Model, NotMeasured
from probes.load.capacity import CapacityPoint, knob_point
from probes.load.metrics import is_good, latency_samples, request_latencies
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord, load_records
from probes.load.runner import steady_records

RecordsStatus = Literal["verified", "missing", "mismatch", "unreadable"]


class RecordsCheck(Model):
    path: str
    sha256: str = Field(description="as named by the factsheet")
    records: int
    status: RecordsStatus


@dataclass
class PointRecords:
    """One load point's raw records file, with what is needed to recompute its figures."""

    file: RecordsFile
    point: LoadPoint
    slo: SLO
    folder: Path | None

    @cached_property
    def _data(self) -> tuple[RecordsStatus, bytes | None]:
        if self.folder is None:
            return "missing", None
        try:  # confined to the folder, bounded (factsheet.untrusted): a refusal is exit 2
            data = read_records_file(self.folder, self.file.path)
        except OSError:
            return "missing", None
        return ("verified" if sha256_bytes(data) == self.file.sha256 else "mismatch"), data

    def check(self) -> RecordsCheck:
        return RecordsCheck(
            path=self.file.path, sha256=self.file.sha256, records=self.file.records, status=self._data[0]
        )

    @cached_property
    def steady(self) -> list[RequestRecord] | None:
        """The steady window's records, only from a verified file (altered records are no evidence)."""
        status, data = self._data
        if status != "verified":
            return None
        try:
            return steady_records(load_records(data), self.point)
        except ValueError:
            return None

    def samples(self, metric: str) -> list[float] | None:
        steady = self.steady
        return None if steady is None else latency_samples(steady)[metric]

    def good_counts(self) -> tuple[int, int] | None:
        """(good, measured) of the steady window under the point's SLO."""
        steady = self.steady
        if steady is None:
            return None
        good = sum(1 for r in steady if r.ok and is_good(request_latencies(r), self.slo))
        return good, len(steady)


def check_file(folder: Path | None, rec: RecordsFile) -> RecordsCheck:
    status: RecordsStatus = "missing"
    if folder is not None:
        try:
            data = read_records_file(folder, rec.path)
            status = "verified" if sha256_bytes(data) == rec.sha256 else "mismatch"
        except OSError:
            status = "missing"
    return RecordsCheck(path=rec.path, sha256=rec.sha256, records=rec.records, status=status)


def capacity_run_records(sheet: Factsheet, folder: Path | None, run: CapacityPoint) -> PointRecords | None:
    """The records of one run of the load section's capacity search (page 1's run, when a gate judges it),
    with the point it ran: the first load point's shape at the run's value, as the build probes it."""
    load = sheet.load
    if not isinstance(load, LoadSection) or isinstance(load.capacity, NotMeasured) or not load.points:
        return None
    cap = load.capacity
    i = next((k for k, p in enumerate(cap.result.points) if p is run), None)
    if i is None or i >= len(cap.records):
        return None
    point = knob_point(load.points[0].result.point, cap.result.knob, run.value)
    return PointRecords(cap.records[i], point, cap.result.slo, folder)


def load_point_records(sheet: Factsheet, folder: Path | None) -> dict[str, PointRecords]:
    """Per load-point label, its records (load points only: capacity probes are a search, not a claim)."""

    if not isinstance(sheet.load, LoadSection):
        return {}
    return {
        e.result.label: PointRecords(e.records, e.result.point, e.result.metrics.slo, folder)
        for e in sheet.load.points
    }
