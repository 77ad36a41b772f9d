"""The "server view" block of the HTML/PDF factsheet: per run, what the target's /metrics said while it ran,
and the chart of KV-cache usage and the waiting queue over the capacity confirmation run. Shaped here, laid out
by templates/sections/server_view.html.j2 (included by the load section)."""

from __future__ import annotations

from dataclasses import dataclass

from factsheet.document.schema import LoadSection
from factsheet.render.charts import Chart, Series, line_chart
from probes.core.measurement import NotMeasured
from probes.server_view import Saturation, ServerView


@dataclass(frozen=True)
class ServerViewRow:
    label: str
    view: ServerView | NotMeasured
    saturation: Saturation | None
    stopped_early: str | None
    group: str = "load points"  # the table it goes in: the sweep's, or one capacity search's
    run: str = ""  # its name within that table


def server_view_groups(rows: list[ServerViewRow]) -> list[tuple[str, list[ServerViewRow]]]:
    """The rows by table, in page order: one table per search (a row per run), not one per run."""
    groups: dict[str, list[ServerViewRow]] = {}
    for row in rows:
        groups.setdefault(row.group, []).append(row)
    return list(groups.items())


def server_view_rows(load: LoadSection | NotMeasured) -> list[ServerViewRow]:
    """One row per load point and per capacity confirmation run that states a server view."""
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
        rows += [
            ServerViewRow(
                f"{what} {'confirmation' if p.confirmation else 'probe'}: {cap.knob} {p.value:g}",
                p.server_view,
                p.saturation,
                p.stopped_early,
                what,
                f"{'confirmation' if p.confirmation else 'probe'} {p.value:g}",
            )
            for p in cap.points
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
