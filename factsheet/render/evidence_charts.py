"""The pictures beside the headline's evidence: the capacity search (p99 against load, the SLO, each probe's
verdict, the bracket, the confirmation and its repeats, each with its interval), the headline run's latency
distribution against the SLO, and the rebuild values with their interval.

Drawn from the factsheet only (what `render` reads), so a re-render draws the same; every plotted number is in
the chart's description and in the table the document shows beside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from factsheet.document.headline.select import informative_run
from factsheet.document.headline_model import Figure
from factsheet.document.schema import CapacitySection, LoadSection
from factsheet.render.charts import Band, Chart, Marks, Rule, xy_chart
from probes.core.measurement import NotMeasured
from probes.load.metrics import LATENCY_LABELS

_PASS, _FAIL, _SLO = "#1f6f43", "#b3261e", "#7a4b00"


@dataclass(frozen=True)
class DataRow:
    """One plotted point as the table beside its chart states it."""

    series: str
    x: str
    y: float
    lower: float | None
    upper: float | None


@dataclass(frozen=True)
class Picture:
    """A chart with the numbers behind it (rows of its data table) and the anchor of that table."""

    chart: Chart
    rows: list[DataRow]
    x_title: str
    y_title: str
    id: str
    caption: str = ""  # the figure's caption when it says more than the chart's title
    wide: bool = False  # the table as one row per series, a column per x (each series at the same x values)
    digits: int = 1  # decimals of its table's values (a fraction or R² needs more than a latency)


def capacity_picture(cap: CapacitySection | NotMeasured, id: str, profile: str = "") -> Picture | None:
    """p99 of the SLO's metric at each run of the search, against the knob: passes filled, fails open, the
    confirmation and each repeat of it apart, each with its 95 % interval; the SLO and the bracket drawn.
    `profile`: the search's workload profile, named in its title (a document draws one chart per search)."""
    if isinstance(cap, NotMeasured):
        return None
    r = cap.result
    metric = r.slo.p99_metric
    name = LATENCY_LABELS.get(metric, metric)
    threshold = r.slo.thresholds().get(metric)
    runs = [(("confirmation" if p.confirmation else "probe"), p) for p in r.points]
    runs += [("repeat", run.point) for run in (cap.repeats.runs if cap.repeats else [])]
    groups: dict[tuple[str, bool], list] = {}
    rows = []
    for kind, p in runs:
        if p.p99_ms is None:
            continue
        ci = p.metrics.percentile_ci.get(f"{metric}.p99")
        iv = (ci.lower, ci.upper) if ci is not None else None
        groups.setdefault((kind, p.passed), []).append((p.value, p.p99_ms, iv))
        rows.append(
            DataRow(
                f"{kind}, {'pass' if p.passed else 'fail'}", f"{p.value:g}", p.p99_ms, *(iv or (None, None))
            )
        )
    shapes = {
        "probe": ("circle", "ring"),
        "confirmation": ("diamond", "diamond"),
        "repeat": ("square", "square"),
    }
    marks = [
        Marks(
            f"{kind}, {'pass' if ok else 'fail'}",
            [(x, y) for x, y, _ in pts],
            _PASS if ok else _FAIL,
            shapes[kind][0 if ok else 1],
            [iv for _, _, iv in pts],
        )  # fmt: skip
        for (kind, ok), pts in groups.items()
    ]
    rules = (
        (Rule(f"SLO: p99 {name} {threshold:g} ms", threshold, "y", _SLO),) if threshold is not None else ()
    )
    low, high = r.bracket
    bands = (Band(f"bracket [{low:g}, {high:g}]", low, high),) if low is not None and high is not None else ()
    x_title = f"{r.knob} (closed-loop users)" if r.knob == "concurrency" else f"{r.knob} (req/s)"
    y_title = f"p99 {name}, ms (95 % CI)"
    whose = f" ({profile})" if profile else ""
    chart = xy_chart(marks, title=f"Capacity search{whose}: p99 {name} by {r.knob} against the SLO", x_title=x_title,
                     y_title=y_title, rules=rules, bands=bands, x_from_zero=True)  # fmt: skip
    return None if chart is None else Picture(chart, rows, r.knob, y_title, id)


def latency_picture(load: LoadSection | NotMeasured, id: str) -> Picture | None:
    """The headline run's latency distribution (its stated percentiles, min and max: a CDF drawn through them)
    for TTFT and E2EL, against their SLO thresholds."""
    run = informative_run(load)
    if run is None or isinstance(load, NotMeasured):
        return None
    slo = run.metrics.slo
    thresholds = slo.thresholds()
    marks, rows, rules = [], [], []
    colours = {"ttft_ms": "#0072B2", "e2el_ms": "#009E73"}
    for key, colour in colours.items():
        d = getattr(run.metrics, key)
        if d.n == 0 or d.min is None:
            continue
        pts = (
            [(d.min, 0.0)]
            + sorted((v, float(k[1:]) / 100) for k, v in d.percentiles.items())
            + [(d.max, 1.0)]
        )
        marks.append(Marks(f"{LATENCY_LABELS[key]} (n {d.n})", pts, colour, "line"))
        marks.append(Marks(f"{LATENCY_LABELS[key]} percentiles", pts[1:-1], colour, "circle"))
        rows += [DataRow(LATENCY_LABELS[key], f"{q:.0%}" if 0 < q < 1 else ("min" if q == 0 else "max"), v, None,
                         None) for v, q in pts]  # fmt: skip
        if key in thresholds:
            rules.append(Rule(f"SLO {LATENCY_LABELS[key]} {thresholds[key]:g} ms", thresholds[key], "x",
                              "#b3261e" if key == "e2el_ms" else "#7a4b00"))  # fmt: skip
    x_title = "latency, ms"
    chart = xy_chart(marks, title="Latency distribution (CDF) of the headline run", x_title=x_title,
                     y_title="fraction of requests at or below", rules=tuple(rules), x_from_zero=True)  # fmt: skip
    caption = f"Latency distribution (CDF through its stated percentiles) of {run.where}, against the SLO."
    return None if chart is None else Picture(chart, rows, "fraction", x_title, id, caption, wide=True)


def rebuild_picture(f: Figure | None, id: str) -> Picture | None:
    """Each repeat's value of a headline figure, with its rebuild interval (the range the next build's value
    is predicted in) and the SLO threshold where the figure has one."""
    if f is None or f.rebuild is None:
        return None
    rb = f.rebuild
    pts = [(i + 1.0, v) for i, v in enumerate(rb.values) if v is not None]
    rows = [DataRow("repeat", f"{int(x)}", y, None, None) for x, y in pts]
    rules = []
    if rb.interval is not None:
        for what, v in (("lower", rb.interval.lower), ("upper", rb.interval.upper)):
            if v is not None:
                rules.append(Rule(f"rebuild interval, {what} {v:,.1f}", v, "y", "#2a5da2"))
                rows.append(DataRow(f"rebuild interval, {what}", "next build", v, None, None))
    if f.threshold_ms is not None:
        rules.append(Rule(f"SLO {f.threshold_ms:g} ms", f.threshold_ms, "y", "#b3261e"))
    chart = xy_chart([Marks(f"{f.label} per repeat", pts, "#1f2a44", "diamond")],
                     title=f"{f.label} over {rb.k} repeats and the rebuild interval", x_title="repeat",
                     y_title=f"{f.label}, {f.unit}", rules=tuple(rules), x_from_zero=True)  # fmt: skip
    return None if chart is None else Picture(chart, rows, "repeat", f.unit, id)
