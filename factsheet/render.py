"""HTML and PDF renderings of a factsheet: jinja2 templates, weasyprint for print.

The page frame (templates/factsheet.html.j2) includes one partial per section (templates/sections/),
all built from the macros in templates/macros.html.j2. What a section shows is shaped here (`view`):
counts, rows, figure numbers, so the templates only lay figures out and a designer can change them.

The PDF is made from the same HTML and carries the factsheet JSON as an attachment, so the
document a reader holds contains the machine-checkable record it was made from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import jinja2
from markupsafe import Markup
from pydantic import BaseModel

from factsheet.charts import Chart, Points, Series, line_chart, scatter_chart
from factsheet.glance import glance_rows
from factsheet.outputs import FACTSHEET_HTML, FACTSHEET_JSON, FACTSHEET_PDF
from factsheet.pdfa import AssociatedFile, archival_pdf
from factsheet.resources import TEMPLATES, data_file, package_data
from factsheet.schema import Factsheet, LoadSection
from factsheet.server_view_section import confirmation_chart, server_view_rows
from factsheet.untrusted.limits import MAX_FACTSHEET_BYTES
from factsheet.untrusted.reading import read_given
from probes.core.digests import sha256_bytes
from probes.core.errors import InputError
from probes.core.files import together, write_atomic
from probes.core.measurement import MS_PER_S, NotMeasured
from probes.load.metrics import LoadMetrics
from tuner import TuningResult

HTML_TEMPLATE = "factsheet.html.j2"
SECTIONS = (
    "masthead",
    "summary",
    "identity",
    "system",
    "load",
    "accuracy",
    "energy",
    "tuning",
    "predictor",
    "provenance",
    "compliance",
    "definitions",
)  # the partials under templates/sections/, in page order
CSS_FILE = "factsheet.css"

# Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
_METRIC_COLOURS = {"ttft_ms": "#0072B2", "tpot_ms": "#D55E00", "e2el_ms": "#009E73"}
_METRIC_NAMES = {"ttft_ms": "TTFT", "tpot_ms": "TPOT", "itl_ms": "ITL", "e2el_ms": "E2EL"}


class RenderError(InputError):
    """The factsheet cannot be rendered where asked (bad output folder, missing templates)."""


def render_html(sheet: Factsheet, integrity: Integrity | None = None) -> str:
    """The factsheet as one self-contained HTML document (styles and charts inline); with `integrity`,
    it names the digest of the JSON it was rendered from and the key that signs it."""
    template = _environment().get_template(HTML_TEMPLATE)
    return template.render(
        sheet=sheet,
        integrity=integrity,
        css=Markup(data_file(TEMPLATES, CSS_FILE).read_text(encoding="utf-8")),  # our own file: trusted
        sections=SECTIONS,
        view=view(sheet),
        figures=figures(sheet),
        records_files=sheet.records_files(),
        metric_names=_METRIC_NAMES,
        glance=glance_rows(sheet),
    )


@dataclass(frozen=True)
class Figure:
    """A chart as the document shows it: numbered in page order, with a short visible caption (the
    plotted values are in the chart's own accessible description, not repeated in the caption)."""

    number: int
    chart: Chart
    caption: str


def figures(sheet: Factsheet) -> dict[str, list[Figure] | Figure | None]:
    """Every figure of the document by section, numbered in the order the sections come."""
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

    load = [numbered(c) for c in charts["load"]]
    tuning = numbered(charts["tuning"]) if charts["tuning"] is not None else None
    predictor = [numbered(c) for c in charts["predictor"]]
    return {"load": load, "tuning": tuning, "predictor": predictor}


@dataclass(frozen=True)
class LatencyRow:
    key: str
    name: str
    dist: object  # probes.core.measurement.Distribution
    ci_p50: object | None
    ci_p99: object | None
    sufficiency: object | None


@dataclass(frozen=True)
class PointView:
    label: str
    result: object  # probes.load.runner.PointResult
    metrics: LoadMetrics
    records: object  # factsheet.schema.RecordsFile
    latency: list[LatencyRow]
    weak_p99: list[str]  # display names of metrics whose p99 rests on too few samples


@dataclass(frozen=True)
class CapacityRow:
    point: object  # probes.load.capacity.CapacityPoint
    records: object
    n: int | None
    sufficiency: object | None
    attainment_ci: object | None
    p99_ci: object | None


def view(sheet: Factsheet) -> dict:
    """What the sections show, shaped from the factsheet (the templates only lay it out)."""
    return {
        "load": _load_view(sheet.load),
        "accuracy": _accuracy_view(sheet.accuracy),
        "energy": _energy_view(sheet.energy),
        "library_rows": _library_rows(sheet.system),
        "definitions": _definitions(sheet.load),
        "server_view_rows": server_view_rows(sheet.load),
    }


def _load_view(load: LoadSection | NotMeasured) -> dict | None:
    if isinstance(load, NotMeasured) or not load.points:
        return None
    points = [_point_view(e) for e in load.points]
    slo = load.points[0].result.metrics.slo
    thresholds = slo.thresholds()
    return {
        "points": points,
        "completed": sum(p.metrics.completed for p in points),
        "failed": sum(p.metrics.failed for p in points),
        "flagged_points": sum(1 for p in points if p.weak_p99),
        "thresholds": [(_METRIC_NAMES[k], v) for k, v in sorted(thresholds.items())],
        "p99_metric": _METRIC_NAMES[slo.p99_metric],
        "p99_checked": slo.p99_metric in thresholds,
        "capacity": _capacity_view(load.capacity),
    }


def _point_view(entry) -> PointView:
    m = entry.result.metrics
    rows = [
        LatencyRow(
            key=k,
            name=_METRIC_NAMES[k],
            dist=getattr(m, k),
            ci_p50=m.percentile_ci.get(f"{k}.p50"),
            ci_p99=m.percentile_ci.get(f"{k}.p99"),
            sufficiency=m.sample_sufficiency.get(k),
        )
        for k in ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms")
    ]
    weak = [_METRIC_NAMES.get(k, k) for k in _weak_p99(m)]
    return PointView(entry.result.label, entry.result, m, entry.records, rows, weak)


def _capacity_view(capacity) -> dict | None:
    if isinstance(capacity, NotMeasured):
        return None
    c = capacity.result
    rows = []
    for pt, rec in zip(c.points, capacity.records, strict=True):
        check = pt.metrics.p99_check
        rows.append(
            CapacityRow(
                point=pt,
                records=rec,
                n=check.n if check else None,
                sufficiency=check.sufficiency if check else None,
                attainment_ci=pt.metrics.goodput_ci.attainment if pt.metrics.goodput_ci else None,
                p99_ci=pt.metrics.percentile_ci.get(f"{c.slo.p99_metric}.p99"),
            )
        )
    unit = " req/s" if c.knob == "rate" else ""
    bracket = tuple(fmt_sig(b) if b is not None else "—" for b in c.bracket)
    low, high = c.range
    span = f"[{fmt_sig(low) if low is not None else '—'}, {fmt_sig(high) if high is not None else '—'})"
    answer = next((r for r in reversed(rows) if r.point.value == c.capacity and r.point.passed), None)
    if c.capacity is None:
        headline = f"capacity at SLO: no probed {c.knob} met the SLO"
    else:
        headline = f"capacity at SLO {c.knob} {fmt_sig(c.capacity)}{unit}, range {span}"
        if c.confirmed:
            headline += f", confirmed by {answer.n} requests"
        if c.insufficient_samples:
            headline += ", its p99 on too few samples"
    return {
        "rows": rows,
        "unit": unit,
        "bracket": bracket,
        "range": span,
        "answer": answer,
        "ends": _bracket_ends(c, rows),
        "headline": headline,
    }


def _bracket_ends(c, rows: list[CapacityRow]) -> list[tuple[str, CapacityRow]]:
    """The runs the bracket's ends rest on (the last run at each end value: a confirmation if any)."""
    ends = []
    for what, value in (("highest pass", c.bracket[0]), ("lowest fail", c.bracket[1])):
        at = [r for r in rows if r.point.value == value]
        if value is not None and at:
            ends.append((what, at[-1]))
    return ends


def _accuracy_view(accuracy) -> dict | None:
    if isinstance(accuracy, NotMeasured):
        return None
    acc = accuracy.result
    pr = acc.pass_rates
    test = "plus" if "plus" in acc.tests_run else "base"
    failed = [s for s in acc.per_task if getattr(s, test).status != "pass"]
    return {
        "benchmark": acc.benchmark,
        "headline_rates": pr.plus or pr.base,
        "headline_tests": "base+plus" if pr.plus else "base",
        "n_tasks": pr.n_tasks,
        "n_samples": pr.n_samples_per_task,
        "ks": sorted(pr.base),
        "failed": failed,
        "failed_shown": failed[:_FAILED_SAMPLES_SHOWN],
    }


_FAILED_SAMPLES_SHOWN = 60  # the rest stay in the raw records; a longer table buries the document


def _energy_view(energy) -> dict:
    """The first missing layer of the energy figures (section, window, total), or none."""
    if isinstance(energy, NotMeasured):
        return {"missing": energy}
    if isinstance(energy.energy, NotMeasured):
        return {"missing": energy.energy}
    if isinstance(energy.energy.total, NotMeasured):
        return {"missing": NotMeasured(reason=f"total: {energy.energy.total.reason}")}
    return {"missing": None}


def _library_rows(system) -> list[tuple[tuple[str, str], object]]:
    """Tool-side and serving-side libraries side by side; a serving side not inspected says why once."""
    tool = sorted(system.libraries.items())
    serving = system.serving_libraries
    serve = [] if isinstance(serving, NotMeasured) else sorted(serving.items())
    rows = []
    for i in range(max(len(tool), len(serve), 1)):
        left = tool[i] if i < len(tool) else ("", "")
        if isinstance(serving, NotMeasured):
            right = serving if i == 0 else ("", "")
        else:
            right = serve[i] if i < len(serve) else ("", "")
        rows.append((left, right))
    return rows


def _definitions(load: LoadSection | NotMeasured) -> list[tuple[str, str]]:
    """Every term the load figures use, with the methods behind its percentiles and intervals."""
    if isinstance(load, NotMeasured) or not load.points:
        return []
    m0 = load.points[0].result.metrics
    rows = [(_METRIC_NAMES.get(k, _label(k)), v) for k, v in m0.definitions.items()]
    rows.append(("percentile", load.percentile_method))
    if m0.sample_sufficiency:
        rows.append(("early stopping", next(iter(m0.sample_sufficiency.values())).rule))
    if m0.percentile_ci:
        rows.append(("percentile CI method", next(iter(m0.percentile_ci.values())).method))
    if m0.goodput_ci:
        rows.append(("goodput CI method", m0.goodput_ci.method))
    return rows


def render_pdf(
    html: str,
    json_bytes: bytes,
    path: Path,
    *,
    name: str = FACTSHEET_JSON,
    description: str = "The factsheet as JSON (the record this document was rendered from)",
) -> None:
    """Print `html` to an archival (PDF/A-3u), tagged A4 PDF at `path` with `json_bytes` attached as
    `name`, the associated file the document was rendered from (the compliance report prints this way too)."""
    write_atomic(Path(path), pdf_bytes(html, json_bytes, name=name, description=description))


def pdf_bytes(html: str, json_bytes: bytes, *, name: str = FACTSHEET_JSON, description: str = "") -> bytes:
    """The archival PDF of `html` with `json_bytes` attached (see `render_pdf`)."""
    record = AssociatedFile(
        name=name,
        data=json_bytes,
        description=description or "The factsheet as JSON (the record this document was rendered from)",
    )
    # Styles and charts are inline: the base URL only anchors relative links, if a template ever has one.
    return archival_pdf(html, str(package_data(TEMPLATES)), [record])


@dataclass(frozen=True)
class Integrity:
    """What the rendered documents say about the record they show."""

    json_sha256: str  # 'sha256:...' of the factsheet.json bytes (also attached to the PDF)
    signing_key_id: str | None = None  # set when the build signs the outputs


def render_all(
    sheet: Factsheet, out_dir: Path, *, write_json: bool = True, signing_key_id: str | None = None
) -> list[Path]:
    """Write factsheet.json (first), .html and .pdf into `out_dir`; returns the paths written.

    With `write_json=False` (re-rendering a factsheet in place) the JSON file is left alone, and the
    PDF carries its bytes when it holds this very factsheet (else the factsheet's own JSON).
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise RenderError(f"output folder {out_dir}: exists and is not a folder")
    json_path = out_dir / FACTSHEET_JSON
    canonical = sheet.model_dump_json(indent=2).encode()
    record = json_to_attach(sheet, json_path) if not write_json else canonical
    html = render_html(sheet, Integrity(sha256_bytes(record), signing_key_id))
    pdf = pdf_bytes(html, record)
    # Everything is rendered before anything is written, and the files go in place together: a render
    # stopped by a signal (or failing) leaves the folder as it was, or with the whole new set.
    files = ([(json_path, canonical)] if write_json else []) + [
        (out_dir / FACTSHEET_HTML, html.encode()),
        (out_dir / FACTSHEET_PDF, pdf),
    ]
    with together():
        for path, data in files:
            write_atomic(path, data)
    return [path for path, _ in files]


def json_to_attach(sheet: Factsheet, json_path: Path) -> bytes:
    """The bytes of `json_path` if it is this factsheet's JSON, else the factsheet serialised afresh."""
    canonical = sheet.model_dump_json(indent=2).encode()
    try:
        existing = read_given(json_path, MAX_FACTSHEET_BYTES, "factsheet")  # bounded, never a FIFO
        same = Factsheet.model_validate_json(existing).model_dump_json(indent=2).encode() == canonical
    except (OSError, ValueError):  # missing, unreadable or another document: not this factsheet's record
        return canonical
    return existing if same else canonical


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
        name: {c["n"]: c["r2_mean"] for c in t["learning_curve"]}
        for name, t in predictor.targets.items()
        if t.get("learning_curve") and t.get("status") != "not_learnable"
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
    pareto = predictor.pareto or {}
    senses = list(pareto.get("senses", {}).items())
    if len(senses) >= 2 and pareto.get("configurations"):
        (fx, sx), (fy, sy) = senses[:2]

        def xy(rows):
            return [(r[fx], r[fy]) for r in rows]

        charts.append(
            scatter_chart(
                [
                    Points("measured", xy(pareto["configurations"]), "#9aa3b0", 2.2),
                    Points("Pareto front", xy(pareto["front"]), "#a23b2a", 3.4),
                ],
                title=f"Pareto front of {len(senses)} objectives, drawn on {fx} and {fy}",
                x_title=f"{fx} ({sx}imise)",
                y_title=f"{fy} ({sy}imise)",
                log_x=all(r[fx] > 0 for r in pareto["configurations"]),
                log_y=all(r[fy] > 0 for r in pareto["configurations"]),
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
            f"{_METRIC_NAMES[k]} p{q}",
            [getattr(m, k).p(q) for m in metrics],
            _METRIC_COLOURS[k],
            dashed=q == 99,
        )
        for k in ("ttft_ms", "tpot_ms", "e2el_ms")
        for q in (50, 99)
    ]
    throughput = [Series("output tok/s", [m.output_throughput for m in metrics], "#1f2a44")]
    charts = [
        line_chart(
            labels,
            x_title,
            latency,
            title="Latency p50 (solid) and p99 (dashed) by load point",
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


@cache
def _environment() -> jinja2.Environment:
    data_file(TEMPLATES, HTML_TEMPLATE)  # a broken install says so in one line, before jinja2 would
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(TEMPLATES, "."),  # package data: works from a wheel, a zip or a checkout
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        num=fmt_num, pct=fmt_pct, sig=fmt_sig, utc=fmt_epoch, fields=_fields, label=_label, weak_p99=_weak_p99
    )
    env.tests.update(
        not_measured=lambda v: isinstance(v, NotMeasured), model=lambda v: isinstance(v, BaseModel)
    )
    return env


def fmt_num(value: float | int | None, digits: int = 1) -> str:
    """Fixed decimals with thousands separators; '—' for a figure that does not exist."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:,.{digits}f}"


def fmt_pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{100 * value:.{digits}f} %"


def fmt_sig(value: float | int | None, digits: int = 4) -> str:
    """Significant digits, for figures whose magnitude varies (energy, rates, generic numbers)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def fmt_epoch(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _fields(model: BaseModel) -> list[tuple[str, object]]:
    """A model's serialised fields in declaration order (excluded fields stay out, as in the JSON)."""
    return [
        (name, getattr(model, name)) for name, info in type(model).model_fields.items() if not info.exclude
    ]


def _weak_p99(metrics: LoadMetrics) -> list[str]:
    """Metrics whose p99 exists but rests on too few samples (no sample at all is reported as such)."""
    return [k for k in metrics.insufficient_samples if getattr(metrics, k).n > 0]


def _label(name: str) -> str:
    return name.replace("_", " ")
