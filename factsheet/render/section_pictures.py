"""The pictures of the energy, tuning and predictor sections, each with the numbers behind it (a `Picture`):
power over the measured window, the tuner's climb against the SLO, the predictor's learning curve and
Pareto front.

Drawn from the factsheet only (what `render` reads), so a re-render draws the same; the table beside each
chart states every plotted number.
"""

from __future__ import annotations

from factsheet.document.schema import EnergySection
from factsheet.render.charts import Band, Marks, Points, Rule, Series, line_chart, scatter_chart, xy_chart
from factsheet.render.evidence_charts import DataRow, Picture
from probes.core.measurement import NotMeasured
from probes.energy.figures import ComponentFigures, TotalFigures
from probes.energy.monitor import IdlePower
from tuner import TuningResult

_COLOURS = ("#1f6f43", "#a23b2a", "#2a5da2", "#8a5a00", "#6a3d9a", "#555555")
_MEETS, _MISSES = "#1f6f43", "#b3261e"


def energy_picture(energy: EnergySection | NotMeasured, id: str) -> Picture | None:
    """Mean power of each measured component (and their total) over the idle window before the run and over
    the measured steady window, against seconds since the first of them began; the measured window shaded.
    The factsheet states each window's mean power (its energy over its duration); the counters' readings in
    between are its raw records (Appendix B), not drawn here."""
    if isinstance(energy, NotMeasured) or isinstance(energy.energy, NotMeasured):
        return None
    en = energy.energy
    idle = en.idle if isinstance(en.idle, IdlePower) else None
    t0 = min(en.t_start, idle.t_start) if idle else en.t_start
    idle_w = {
        c.component.label: c.power_w
        for c in (idle.components if idle else [])
        if not isinstance(c.power_w, NotMeasured)
    }
    lines: list[tuple[str, float | None, float]] = [
        (c.component.label, idle_w.get(c.component.label), c.gross.avg_power_w.value)
        for c in en.components
        if isinstance(c, ComponentFigures)
    ]
    if isinstance(en.total, TotalFigures) and len(lines) > 1:
        idle_total = en.total.idle_power_w
        lines.append(
            (
                "total",
                None if isinstance(idle_total, NotMeasured) else idle_total.value,
                en.total.gross.avg_power_w.value,
            )
        )
    if not lines:
        return None
    marks, rows = [], []
    spans = [("steady window", en.t_start, en.t_end)]
    if idle:
        spans.insert(0, ("idle, before the run", idle.t_start, idle.t_end))
    for i, (label, idle_power, window_power) in enumerate(lines):
        colour = _COLOURS[i % len(_COLOURS)]
        for what, a, b in spans:
            power = window_power if what == "steady window" else idle_power
            if power is None:
                continue
            x0, x1 = a - t0, b - t0
            marks.append(Marks(f"{label}, {what}", [(x0, power), (x1, power)], colour, "line"))
            rows.append(DataRow(f"{label}, {what}", f"{x0:.1f}–{x1:.1f}", power, None, None))
    band = Band(f"measured window, {en.duration_s:.1f} s", en.t_start - t0, en.t_end - t0)
    chart = xy_chart(marks, title="Power over the measured window (each window's mean)",
                     x_title="seconds since the idle window began", y_title="mean power, W", bands=(band,),
                     x_from_zero=True)  # fmt: skip
    caption = (
        "Mean power of each measured component over the idle window and the measured steady window (shaded), "
        "as the energy section states them; each counter's readings are its raw records."
    )
    return None if chart is None else Picture(chart, rows, "seconds", "mean power, W", id, caption)


def tuning_pictures(tuning: TuningResult | NotMeasured, id: str) -> list[Picture]:
    """The tuner's climb: each evaluation's p99 against the SLO (meeting it filled, missing it open; live and
    simulated apart; with its 95 % CI), and each evaluation's goodput with its CI beside the default's."""
    if isinstance(tuning, NotMeasured):
        return []
    entries = [e for e in tuning.trace if e.figures is not None]
    if not entries:
        return []
    slo = tuning.score.slo_p99_ms
    metric = tuning.score.slo_metric

    def name(e) -> str:
        return f"#{e.index} {e.point.label()}"

    def source(e) -> str:
        return "live" if e.source == "live" else "simulated"

    p99_groups: dict[tuple[str, bool], list] = {}
    p99_rows, goodput_groups, goodput_rows = [], {}, []
    for e in entries:
        p, g = e.figures.p99, e.figures.goodput
        meets = p.value <= slo
        p99_groups.setdefault((source(e), meets), []).append(e)
        p99_rows.append(DataRow(f"{source(e)}, {'meets' if meets else 'misses'} SLO", name(e), p.value, p.ci_low,
                                p.ci_high))  # fmt: skip
        goodput_groups.setdefault(source(e), []).append(e)
        goodput_rows.append(DataRow(source(e), name(e), g.value, g.ci_low, g.ci_high))
    shapes = {"live": ("circle", "ring"), "simulated": ("diamond", "square")}
    p99_marks = [
        Marks(
            f"{src}, {'meets' if ok else 'misses'} SLO",
            [(float(e.index), e.figures.p99.value) for e in es],
            _MEETS if ok else _MISSES,
            shapes[src][0 if ok else 1],
            [(e.figures.p99.ci_low, e.figures.p99.ci_high) for e in es],
        )  # fmt: skip
        for (src, ok), es in p99_groups.items()
    ]
    x_title = "evaluation # (its operating point: the table beside)"
    p99_y = f"p99 {metric}, ms (95 % CI)"
    p99 = xy_chart(p99_marks, title=f"Tuner's climb: p99 {metric} of each evaluation against the SLO",
                   x_title=x_title, y_title=p99_y, rules=(Rule(f"SLO: p99 {slo:g} ms", slo, "y"),),
                   x_from_zero=True)  # fmt: skip
    goodput_marks = [
        Marks(
            src,
            [(float(e.index), e.figures.goodput.value) for e in es],
            _COLOURS[i],
            shapes[src][0],
            [(e.figures.goodput.ci_low, e.figures.goodput.ci_high) for e in es],
        )  # fmt: skip
        for i, (src, es) in enumerate(goodput_groups.items())
    ]
    default = tuning.default
    rules = ()
    if not isinstance(default, NotMeasured):
        rules = (Rule(f"default's goodput {default.figures.goodput.value:.2f}", default.figures.goodput.value, "y",
                      "#555555"),)  # fmt: skip
    goodput_y = "goodput, req/s (95 % CI)"
    goodput = xy_chart(goodput_marks, title="Tuner's climb: goodput of each evaluation", x_title=x_title,
                       y_title=goodput_y, rules=rules, x_from_zero=True)  # fmt: skip
    out = []
    if p99 is not None:
        out.append(Picture(p99, p99_rows, "evaluation", p99_y, f"{id}-p99"))
    if goodput is not None:
        out.append(Picture(goodput, goodput_rows, "evaluation", goodput_y, f"{id}-goodput"))
    return out


def predictor_pictures(predictor, id: str) -> list[Picture]:
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
    out = []
    if sizes:
        y_title = "R² (mean over random subsets)"
        chart = line_chart(
            [str(n) for n in sizes],
            "configurations measured and used for training",
            [
                Series(name, [c.get(n) for n in sizes], _COLOURS[i % len(_COLOURS)])
                for i, (name, c) in enumerate(curves.items())
            ],
            title="Learning curve: Random Forest R² on held-out configurations",
            y_title=y_title,
            log_y=False,
        )
        rows = [
            DataRow(name, str(n), r2, None, None) for name, c in curves.items() for n, r2 in sorted(c.items())
        ]
        if chart is not None:
            out.append(Picture(chart, rows, "configurations", y_title, f"{id}-curve", digits=3))
    pareto = predictor.pareto
    senses = list(pareto.senses.items()) if pareto else []
    if len(senses) >= 2 and pareto.configurations:
        (fx, sx), (fy, sy) = senses[:2]

        def xy(rows):
            return [(getattr(r, fx), getattr(r, fy)) for r in rows]

        chart = scatter_chart(
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
        front = {r.config_id for r in pareto.front}
        rows = [
            DataRow(
                f"{'Pareto front' if r.config_id in front else 'measured'} ({r.config_id})",
                f"{getattr(r, fx):.4g}",
                getattr(r, fy),
                None,
                None,
            )
            for r in sorted(pareto.configurations, key=lambda r: (r.config_id not in front, getattr(r, fx)))
        ]
        if chart is not None:
            out.append(Picture(chart, rows, fx, fy, f"{id}-pareto", digits=4))
    return out
