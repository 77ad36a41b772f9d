"""The server view and the saturation test of each run, recomputed from its /metrics scrapes and its request
records, the scrapes bound to the run they were taken in."""

from __future__ import annotations

from pathlib import Path

from factsheet.binding import Context, server_scrapes_context
from factsheet.document.schema import RecordsFile
from factsheet.rederive.compare import Discrepancy, differences
from factsheet.rederive.records import Binding, Expected, read_records
from probes.core.measurement import NotMeasured
from probes.load.metrics import LoadMetrics
from probes.load.records import RequestRecord
from probes.load.runner import server_figures
from probes.server_view import (
    DEFAULT_INTERVAL_S,
    Saturation,
    ScrapeRecord,
    ServerView,
    ServerViewSpec,
)


class Recomputed:
    """What a run's scrapes and records give, with the problems found reading the scrapes."""

    def __init__(self, view, saturation, problems: list[Discrepancy]):
        self.server_view, self.saturation, self.problems = view, saturation, problems


def recompute(
    stated_view: ServerView | NotMeasured | None,
    stated_saturation: Saturation | None,
    scrapes_file: RecordsFile | None,
    run: Context,
    records: list[RequestRecord],
    metrics: LoadMetrics,
    folder: Path,
    where: tuple[str, str],
    binding: Binding | None,
) -> Recomputed:
    """`where`: (the field naming the scrapes file, e.g. `load.points[0].server_records`; the run's result,
    e.g. `load.points[0].result`); `run`: the context the run's request records are bound to, which the
    scrapes' context names."""
    figure, result = where
    if stated_view is None and stated_saturation is None and scrapes_file is None:
        return Recomputed(None, None, [])  # an older document, or not asked: nothing stated, nothing to check
    sat = stated_saturation
    interval = sat.interval_s if sat is not None and sat.interval_s is not None else DEFAULT_INTERVAL_S
    config = ServerViewSpec(interval_s=interval, stop_when_saturated=bool(sat and sat.stop_when_saturated))
    if scrapes_file is None:
        if isinstance(
            stated_view, NotMeasured
        ):  # no page to read: the reason is attested, saturation on TTFT
            view, saturation = server_figures(records, stated_view, config, metrics)
            return Recomputed(view, saturation, [])
        missing = Discrepancy(
            figure=figure, stated="none", recomputed="the /metrics scrapes the figures rest on"
        )
        return Recomputed(stated_view, stated_saturation, [missing])
    context = server_scrapes_context(run, config.interval_s, config.stop_when_saturated)
    fields = {
        "run": f"{figure} (the run it was scraped in)",
        "interval_s": f"{result}.saturation.interval_s",
        "stop_when_saturated": f"{result}.saturation.stop_when_saturated",
    }
    scrapes, problems = read_records(
        folder, scrapes_file, ScrapeRecord.model_validate, figure, Expected(context, fields), binding
    )
    if scrapes is None:
        return Recomputed(stated_view, stated_saturation, problems)
    view, saturation = server_figures(records, scrapes, config, metrics)
    return Recomputed(view, saturation, problems)


def compare(stated_view, stated_saturation, again: Recomputed, path: str, src: str) -> list[Discrepancy]:
    """`path`: where the run's result is stated (its `server_view` and `saturation` fields under it)."""
    return (
        again.problems
        + differences(stated_view, again.server_view, f"{path}.server_view", src)
        + differences(stated_saturation, again.saturation, f"{path}.saturation", src)
    )
