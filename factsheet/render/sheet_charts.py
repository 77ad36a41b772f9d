"""The factsheet's charts: which figures each section shows, drawn with `charts`, numbered in page order."""

from __future__ import annotations

from dataclasses import dataclass

from factsheet.document.headline.figures import stated_or_computed
from factsheet.document.schema import Factsheet, LoadSection
from factsheet.render.charts import Chart, Series, line_chart
from factsheet.render.evidence_charts import Picture, capacity_picture, latency_picture, rebuild_picture
from factsheet.render.section_pictures import energy_picture, predictor_pictures, tuning_pictures
from factsheet.render.server_view import confirmation_chart
from probes.core.measurement import NotMeasured
from probes.load.metrics import LATENCY_LABELS

# Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
_METRIC_COLOURS = {"ttft_ms": "#0072B2", "tpot_ms": "#D55E00", "e2el_ms": "#009E73"}


@dataclass(frozen=True)
class Figure:
    """A chart as the document shows it: numbered in page order, with a short visible caption (the
    plotted values are in the chart's own accessible description, not repeated in the caption)."""

    number: int
    chart: Chart
    caption: str
    picture: Picture | None = None  # a chart with the numbers behind it, shown as a table beside it


def figures(sheet: Factsheet) -> dict[str, list[Figure] | dict[str, Figure] | Figure | None]:
    """Every figure of the document by section, numbered in the order the sections come: the summary's
    (the capacity search, the headline run's latency distribution, each compared workload's search: also
    under `compared`, so that its section links to it), the load section's, then the rest."""
    h = stated_or_computed(sheet)
    load = sheet.load
    profile = "" if isinstance(load, NotMeasured) or not load.compared_workloads else load.profile()
    summary = [capacity_picture(load.capacity if not isinstance(load, NotMeasured) else load, "data-capacity",
                                profile), latency_picture(load, "data-latency")]  # fmt: skip
    compared = {} if isinstance(load, NotMeasured) else {
        c.workload.profile: capacity_picture(c.capacity, f"data-capacity-{c.workload.profile}", c.workload.profile)
        for c in load.compared_workloads
    }  # fmt: skip
    rebuild = [rebuild_picture(h.figure("e2el_ms.p99"), "data-rebuild")]
    charts = {
        "load": [*load_charts(sheet.load), *filter(None, [confirmation_chart(sheet.load)])],
    }
    sections = {
        "energy": [energy_picture(sheet.energy, "data-energy")],
        "tuning": tuning_pictures(sheet.tuning, "data-tuning"),
        "predictor": predictor_pictures(sheet.predictor, "data-predictor"),
    }
    number = 0

    def numbered(chart: Chart) -> Figure:
        nonlocal number
        number += 1
        return Figure(number, chart, f"{chart.title}.")  # the plotted values are in the image's description

    def pictured(p: Picture) -> Figure:
        nonlocal number
        number += 1
        return Figure(number, p.chart, p.caption or f"{p.chart.title}.", p)

    # every search's chart on page 2, beside the capacity it pictures (the summary states each search's)
    first = [pictured(p) for p in summary if p is not None]
    by_profile = {profile: pictured(p) for profile, p in compared.items() if p is not None}
    evidence = [pictured(p) for p in rebuild if p is not None]
    load_figures = [numbered(c) for c in charts["load"]]
    later = {name: [pictured(p) for p in pictures if p is not None] for name, pictures in sections.items()}
    first += by_profile.values()
    return {"summary": first, "capacity": evidence, "compared": by_profile, "load": load_figures, **later}


def load_charts(load: LoadSection | NotMeasured) -> list[Chart]:
    """Latency percentiles and output throughput against load point; empty when nothing to plot."""
    if isinstance(load, NotMeasured) or not load.points:
        return []
    labels, x_title = _x_axis(load)
    metrics = [p.result.metrics for p in load.points]
    latency = [
        Series(
            f"{LATENCY_LABELS[k]} p{q}",
            [getattr(m, k).p(q) for m in metrics],
            _METRIC_COLOURS[k],
            dashed=q == 99,
        )
        for k in ("ttft_ms", "tpot_ms", "e2el_ms")
        for q in (50, 99)
    ]
    thresholds = metrics[0].slo.thresholds() if metrics else {}
    latency += [  # the SLO's thresholds as lines, so each point reads against them
        Series(f"SLO {LATENCY_LABELS[k]}", [thresholds[k]] * len(metrics), "#777777", dashed=True)
        for k in ("ttft_ms", "e2el_ms")
        if k in thresholds
    ]
    throughput = [Series("output tok/s", [m.output_throughput for m in metrics], "#1f2a44")]
    charts = [
        line_chart(
            labels,
            x_title,
            latency,
            title="Latency p50 (solid) and p99 (dashed) by load point, SLO (grey)",
            y_title="ms (log scale)",
            log_y=True,
        ),
        line_chart(
            labels,
            x_title,
            throughput,
            title="Output throughput by load point",
            y_title="output tokens/s",
            log_y=False,
        ),
    ]
    return [c for c in charts if c is not None]


def _x_axis(load: LoadSection) -> tuple[list[str], str]:
    points = [p.result.point for p in load.points]
    if all(p.mode == "closed" for p in points):
        return [str(p.concurrency) for p in points], "concurrency (closed loop)"
    if all(p.mode == "open" for p in points):
        return [f"{p.rate:g}" for p in points], "target rate, req/s (open loop)"
    labels = [f"c={p.concurrency}" if p.mode == "closed" else f"{p.rate:g}/s" for p in points]
    return labels, "load point (c = closed-loop concurrency, /s = open-loop rate)"
