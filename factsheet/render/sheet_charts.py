"""The factsheet's charts: which figures each section shows, drawn with `charts`, numbered in page order."""

from __future__ import annotations

from dataclasses import dataclass

from factsheet.document.headline.figures import stated_or_computed
from factsheet.document.schema import Factsheet, LoadSection
from factsheet.render.charts import Chart, Points, Series, line_chart, scatter_chart
from factsheet.render.evidence_charts import Picture, capacity_picture, latency_picture, rebuild_picture
from factsheet.render.server_view import confirmation_chart
from probes.core.measurement import MS_PER_S, NotMeasured
from probes.load.metrics import LATENCY_LABELS
from tuner import TuningResult

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
    (the capacity search and the headline run's latency distribution), the load section's, then the rest."""
    h = stated_or_computed(sheet)
    load = sheet.load
    summary = [capacity_picture(load.capacity if not isinstance(load, NotMeasured) else load, "data-capacity"),
               latency_picture(load, "data-latency")]  # fmt: skip
    compared = {} if isinstance(load, NotMeasured) else {
        c.workload.profile: capacity_picture(c.capacity, f"data-capacity-{c.workload.profile}")
        for c in load.compared_workloads
    }  # fmt: skip
    rebuild = [rebuild_picture(h.figure("e2el_ms.p99"), "data-rebuild")]
    charts = {
        "load": [*load_charts(sheet.load), *filter(None, [confirmation_chart(sheet.load)])],
        "tuning": tuning_chart(sheet.tuning),
        "predictor": predictor_charts(sheet.predictor),
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

    first = [pictured(p) for p in summary if p is not None]
    evidence = [pictured(p) for p in rebuild if p is not None]
    by_profile = {profile: pictured(p) for profile, p in compared.items() if p is not None}
    load_figures = [numbered(c) for c in charts["load"]]
    tuning = numbered(charts["tuning"]) if charts["tuning"] is not None else None
    predictor = [numbered(c) for c in charts["predictor"]]
    return {"summary": first, "capacity": evidence, "compared": by_profile, "load": load_figures,
            "tuning": tuning, "predictor": predictor}  # fmt: skip


def tuning_chart(tuning: TuningResult | NotMeasured) -> Chart | None:
    """The trajectory: goodput and p99 of every evaluation in trace order, live and simulated apart."""
    if isinstance(tuning, NotMeasured):
        return None
    entries = [e for e in tuning.trace if e.figures is not None]
    names = [f"#{e.index} c{e.point.concurrency}/m{e.point.max_num_seqs}/k{e.point.spec_k}" for e in entries]

    def figure(source: str, what: str, scale: float = 1.0) -> list[float | None]:
        return [getattr(e.figures, what).value * scale if e.source == source else None for e in entries]

    # One axis for goodput (req/s) and p99: p99 is drawn in seconds, which shares its scale.
    to_s = 1 / MS_PER_S
    slo_s = tuning.score.slo_p99_ms * to_s
    series = [
        Series("goodput, live", figure("live", "goodput"), "#1f6f43"),
        Series("goodput, sim.", figure("simulator", "goodput"), "#1f6f43", dashed=True),
        Series("p99, live", figure("live", "p99", to_s), "#a23b2a"),
        Series("p99, sim.", figure("simulator", "p99", to_s), "#a23b2a", dashed=True),
        Series("SLO (p99)", [slo_s] * len(entries), "#777777", dashed=True),
    ]
    return line_chart(
        [str(e.index) for e in entries],  # the operating point of each is in the trace table
        "evaluation # (its operating point: trace table below)",
        series,
        title="Tuning trajectory: goodput and p99 per evaluation",
        y_title="goodput req/s · p99 s",
        log_y=False,
        x_names=names,
    )


_TARGET_COLOURS = ("#1f6f43", "#a23b2a", "#2a5da2", "#8a5a00", "#6a3d9a", "#555555")


def predictor_charts(predictor) -> list[Chart]:
    """The learning curve (held-out R² of the Random Forest against configurations used, per learnable figure)
    and the Pareto front drawn over every measured configuration (its first two objectives)."""
    if isinstance(predictor, NotMeasured):
        return []
    curves = {
        name: {c.n: c.r2_mean for c in t.learning_curve}
        for name, t in predictor.targets.items()
        if t.status is None and t.learning_curve
    }
    sizes = sorted({n for c in curves.values() for n in c})
    charts = [
        line_chart(
            [str(n) for n in sizes],
            "configurations measured and used for training",
            [
                Series(name, [c.get(n) for n in sizes], _TARGET_COLOURS[i % len(_TARGET_COLOURS)])
                for i, (name, c) in enumerate(curves.items())
            ],
            title="Learning curve: Random Forest R² on held-out configurations",
            y_title="R² (mean over random subsets)",
            log_y=False,
        )
        if sizes
        else None
    ]
    pareto = predictor.pareto
    senses = list(pareto.senses.items()) if pareto else []
    if len(senses) >= 2 and pareto.configurations:
        (fx, sx), (fy, sy) = senses[:2]

        def xy(rows):
            return [(getattr(r, fx), getattr(r, fy)) for r in rows]

        charts.append(
            scatter_chart(
                [
                    Points("measured", xy(pareto.configurations), "#9aa3b0", 2.2),
                    Points("Pareto front", xy(pareto.front), "#a23b2a", 3.4),
                ],
                title=f"Pareto front of {len(senses)} objectives, drawn on {fx} and {fy}",
                x_title=f"{fx} ({sx}imise)",
                y_title=f"{fy} ({sy}imise)",
                log_x=all(getattr(r, fx) > 0 for r in pareto.configurations),
                log_y=all(getattr(r, fy) > 0 for r in pareto.configurations),
            )
        )
    return [c for c in charts if c is not None]


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
