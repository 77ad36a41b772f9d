"""The "server view" block of the HTML/PDF factsheet: per run, what the target's /metrics said while it ran,
and the chart of KV-cache usage and the waiting queue over the capacity confirmation run. Shaped here, laid out
by templates/sections/server_view.html.j2 (included by the load section)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from factsheet.document.schema import LoadSection
from factsheet.render.charts import Chart, Series, line_chart
from factsheet.render.environment import fmt_num
from probes.core.measurement import NotMeasured
from probes.server_view import Saturation, ServerView
from probes.server_view.histogram import HistogramQuantiles


@dataclass(frozen=True)
class ServerViewRow:
    label: str
    view: ServerView | NotMeasured
    saturation: Saturation | None
    stopped_early: str | None
    group: str = "load points"  # the table it goes in: the sweep's, or one capacity search's
    run: str = ""  # its name within that table (a search's run: "#i", its row in the search's table of runs)

    def histogram(self, name: str) -> HistogramQuantiles | None:
        """The server's `name` histogram quantiles (None: not measured, or no view)."""
        h = getattr(self.view, name, None) if isinstance(self.view, ServerView) else None
        return None if isinstance(h, NotMeasured) else h


HISTOGRAMS = ("ttft_ms", "e2el_ms")  # the server latencies a row states, estimated from histogram buckets


@dataclass(frozen=True)
class ServerViewTable:
    """One table: the sweep's load points, or one capacity search's runs (a row per run)."""

    group: str
    rows: list[ServerViewRow]
    bounds: dict[str, str]  # by histogram (HISTOGRAMS): its bucket bounds said once (table_bounds)

    def cell(self, row: ServerViewRow, name: str) -> QuantileCell | None:
        h = row.histogram(name)
        return None if h is None else quantile_cell(h, with_buckets=name not in self.bounds)


@dataclass(frozen=True)
class QuantileCell:
    """A histogram's p50 · p90 · p99 estimates, n, and the buckets that hold them (their resolution) where the
    table does not say them once."""

    estimates: str  # "175 · 235 · 249" (ms: finer than the buckets they interpolate in); "> 5,000": in +Inf
    buckets: str | None  # "in (100, 250]" or each quantile's bucket; None: the table's bounds place them
    n: int


def quantile_cell(h: HistogramQuantiles, with_buckets: bool = True) -> QuantileCell:
    qs = [q for _, q in sorted(h.quantiles.items(), key=lambda kq: float(kq[0].lstrip("p")))]
    estimates = [
        fmt_num(q.estimate_ms, 0) if q.estimate_ms is not None else f"> {fmt_num(q.bucket_lower_ms, 0)}"
        for q in qs
    ]
    spans = list(dict.fromkeys((q.bucket_lower_ms, q.bucket_upper_ms) for q in qs))
    buckets = None
    if with_buckets:
        buckets = f"in {_bucket(*spans[0])}" if len(spans) == 1 else " · ".join(_bucket(*s) for s in spans)
    return QuantileCell(" · ".join(estimates), buckets, h.n)


def _bucket(lower: float, upper: float | None) -> str:
    return f"({fmt_num(lower, 0)}, {fmt_num(upper, 0) if upper is not None else '+Inf'}]"


def table_bounds(rows: list[ServerViewRow], name: str) -> str | None:
    """Every bucket bound of the table's `name` quantiles, when they alone place each quantile in its bucket:
    no listed bound lies inside another quantile's bucket and each estimate lies above its bucket's lower
    bound, so the bucket holding an estimate is the one between the two listed bounds around it. None when
    they do not (the cells then state each bucket) or there is no quantile."""
    qs = [q for r in rows if (h := r.histogram(name)) is not None for q in h.quantiles.values()]
    bounds = sorted({b for q in qs for b in (q.bucket_lower_ms, q.bucket_upper_ms) if b is not None})
    for q in qs:
        upper = math.inf if q.bucket_upper_ms is None else q.bucket_upper_ms
        if any(q.bucket_lower_ms < b < upper for b in bounds):
            return None
        if q.estimate_ms is not None and q.estimate_ms <= q.bucket_lower_ms:
            return None
    return ", ".join(fmt_num(b, 0) for b in bounds) if qs else None


def server_view_groups(rows: list[ServerViewRow]) -> list[ServerViewTable]:
    """The rows by table, in page order: one table per search (a row per run), not one per run."""
    groups: dict[str, list[ServerViewRow]] = {}
    for row in rows:
        groups.setdefault(row.group, []).append(row)
    return [
        ServerViewTable(group, rows, {n: b for n in HISTOGRAMS if (b := table_bounds(rows, n)) is not None})
        for group, rows in groups.items()
    ]


def server_view_rows(load: LoadSection | NotMeasured) -> list[ServerViewRow]:
    """One row per load point and per run of each capacity search (probes, confirmations, the headline run's
    repeats) that states a server view, numbered as the search's table of runs numbers them."""
    if isinstance(load, NotMeasured):
        return []
    rows = [
        ServerViewRow(
            e.result.label,
            e.result.server_view,
            e.result.saturation,
            _stopped(e.result),
            "load points",
            e.result.label,
        )  # fmt: skip
        for e in load.points
        if e.result.server_view is not None
    ]
    searches = [("capacity", load.capacity)]
    searches += [(f"capacity {c.workload.profile}", c.capacity) for c in load.compared_workloads]
    for what, section in searches:
        if isinstance(section, NotMeasured):
            continue
        cap = section.result
        runs = [(p, "confirmation" if p.confirmation else "probe") for p in cap.points]
        repeats = section.repeats.runs if section.repeats is not None else []
        runs += [(r.point, f"repeat {j + 2}") for j, r in enumerate(repeats)]
        rows += [
            ServerViewRow(
                f"{what} {kind}: {cap.knob} {p.value:g}",
                p.server_view,
                p.saturation,
                p.stopped_early,
                what,
                f"#{i}",
            )
            for i, (p, kind) in enumerate(runs, start=1)
            if p.server_view is not None
        ]
    return rows


def _stopped(result) -> str | None:
    return result.aborted if result.stop_reason == "saturated" else None


def confirmation_chart(load: LoadSection | NotMeasured) -> Chart | None:
    """KV-cache usage (%) and waiting requests at each scrape of the last capacity confirmation run (the
    answer's long run); None when there is none or it was not scraped."""
    if isinstance(load, NotMeasured) or isinstance(load.capacity, NotMeasured):
        return None
    cap = load.capacity.result
    runs = [p for p in cap.points if p.confirmation and isinstance(p.server_view, ServerView)]
    if not runs:
        return None
    run = runs[-1]
    series = run.server_view.series
    kv = [None if s.kv_cache_usage is None else 100 * s.kv_cache_usage for s in series]
    return line_chart(
        [f"{s.t_s:.0f}" for s in series],
        "seconds since the run's start (one position per scrape)",
        [
            Series("KV-cache usage, %", kv, "#0072B2"),
            Series("waiting requests", [s.waiting for s in series], "#D55E00"),
        ],
        title=f"Server view of the capacity confirmation run ({cap.knob} {run.value:g}): KV-cache usage and waiting requests",
        y_title="KV usage % · waiting requests",
        log_y=False,
    )
