"""What each section of the factsheet shows, shaped from the factsheet: counts, rows, headlines.

The templates only lay these out (a designer can change them without touching a figure); every value here
is read from the factsheet, nothing is measured or defaulted.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, replace

from factsheet.document.host_load import POINTS_SCOPE, run_loads
from factsheet.document.schema import Factsheet, LoadSection
from factsheet.render.environment import DIGEST_SHOWN, digest_start, fmt_sig, label
from factsheet.render.glance import REBUILD_METHOD, answer_hit_rate, rebuild_method
from factsheet.render.server_view import server_view_groups, server_view_rows
from probes.core.measurement import NotMeasured
from probes.load.metrics import LATENCY_LABELS, LoadMetrics
from probes.load.stats import VERDICT_RULE


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
    records: object  # factsheet.document.schema.RecordsFile
    latency: list[LatencyRow]
    weak_p99: list[str]  # display names of metrics whose p99 rests on too few samples


@dataclass(frozen=True)
class CapacityRow:
    """One run of a capacity search, as its search's table shows it (a row per run)."""

    point: object  # probes.load.capacity.CapacityPoint
    records: object
    n: int | None
    sufficiency: object | None
    attainment_ci: object | None
    p99_ci: object | None
    kind: str = "probe"  # probe, confirmation, or "repeat k": the headline run's k-th run


def view(sheet: Factsheet) -> dict:
    """What the sections show, shaped from the factsheet (the templates only lay it out)."""
    return {
        "load": _load_view(sheet.load),
        "accuracy": _accuracy_view(sheet.accuracy),
        "energy": _energy_view(sheet.energy),
        "libraries": _libraries(sheet.system),
        "system_prompt_rows": _system_prompt_rows(sheet.load),
        "definitions": _definitions(sheet.load)
        + ([("rebuild interval", REBUILD_METHOD)] if rebuild_method(sheet) else []),
        "server_view_rows": server_view_rows(sheet.load),
        "server_view_groups": server_view_groups(server_view_rows(sheet.load)),
        "host_loads": run_loads(sheet.load),
        "host_load_groups": _by_scope(run_loads(sheet.load)),
        "records_groups": records_groups(sheet),
        "digest_shown": DIGEST_SHOWN,
    }


@dataclass(frozen=True)
class RecordsGroup:
    """One line of the raw-records listing: whose files (a search's, the load points'), how many and their
    records, each file by name with its record count and the start of its sha256 (whole in the HTML's title and
    in factsheet.json, which `factsheet validate` checks every file against)."""

    holds: str
    start: str  # what every file's path begins with, relative to factsheet.json: its folder, a name's common start
    files: list[tuple[str, int, str, str]]  # path after `start`, records, digest shortened, digest whole
    records: int


def records_groups(sheet: Factsheet) -> list[RecordsGroup]:
    out = []
    for holds, files in sheet.records_groups():
        paths = [rf.path for _, rf in files]
        start = posixpath.commonprefix(paths)
        # up to a folder or a word's end, so that each name reads whole: "records/capacity-" + "01.jsonl"
        start = start[: max(start.rfind("/"), start.rfind("-")) + 1] if len(paths) > 1 else ""
        shown = [(rf.path[len(start) :], rf.records, digest_start(rf.sha256), rf.sha256) for _, rf in files]
        out.append(RecordsGroup(holds, start, shown, sum(rf.records for _, rf in files)))
    return out


def _by_scope(loads: list) -> list[tuple[str, bool, list]]:
    """The runs' host loads by whose runs they are (the sweep's, each search's), in page order, each scope with
    whether its runs are numbered: a search's are named "#i" as its table of runs numbers them (run_loads lists
    them in that order: probes, then repeats)."""
    groups: dict[str, list] = {}
    for r in loads:
        groups.setdefault(r.scope, []).append(r)
    numbered = [(scope, scope != POINTS_SCOPE, rows) for scope, rows in groups.items()]
    return [
        (scope, n, [replace(r, name=f"#{i}") for i, r in enumerate(rows, start=1)] if n else rows)
        for scope, n, rows in numbered
    ]


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
        "thresholds": [(LATENCY_LABELS[k], v) for k, v in sorted(thresholds.items())],
        "p99_metric": LATENCY_LABELS[slo.p99_metric],
        "p99_checked": slo.p99_metric in thresholds,
        "capacity": _capacity_view(load.capacity),
        "compared": [_compared_view(c) for c in load.compared_workloads],
        "comparison": _comparison_rows(load),
    }


@dataclass(frozen=True)
class ComparisonRow:
    """One workload profile's capacity at SLO in the side-by-side table, with what it rests on."""

    profile: str
    endpoint: str
    capacity: object  # CapacitySection | NotMeasured
    answer: CapacityRow | None  # the last passing run at the answer (its confirmation where there is one)
    ttft_p50_ms: float | None
    prefix_cache_hit_rate: float | None
    hit_rate_note: str


def _comparison_rows(load: LoadSection) -> list[ComparisonRow]:
    """The load section's capacity and each compared workload's, side by side (only when any is compared)."""
    if not load.compared_workloads:
        return []
    rows = [_comparison_row(load.profile(), load.points[0].result.point.endpoint, load.capacity)]
    return rows + [
        _comparison_row(c.workload.profile, c.template.endpoint, c.capacity) for c in load.compared_workloads
    ]


def _comparison_row(profile: str, endpoint: str, capacity) -> ComparisonRow:
    cv = _capacity_view(capacity)
    answer = None if cv is None else cv["answer"]
    value, note = answer_hit_rate(capacity)
    ttft = None if answer is None else answer.point.metrics.ttft_ms.p(50)
    return ComparisonRow(profile, endpoint, capacity, answer, ttft, value, note)


def _compared_view(compared) -> dict:
    return {"workload": compared.workload, "template": compared.template, "cap": compared.capacity,
            "cv": _capacity_view(compared.capacity)}  # fmt: skip


def _point_view(entry) -> PointView:
    m = entry.result.metrics
    rows = [
        LatencyRow(
            key=k,
            name=LATENCY_LABELS[k],
            dist=getattr(m, k),
            ci_p50=m.percentile_ci.get(f"{k}.p50"),
            ci_p99=m.percentile_ci.get(f"{k}.p99"),
            sufficiency=m.sample_sufficiency.get(k),
        )
        for k in ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms")
    ]
    weak = [LATENCY_LABELS.get(k, k) for k in weak_p99(m)]
    return PointView(entry.result.label, entry.result, m, entry.records, rows, weak)


def _capacity_view(capacity) -> dict | None:
    if isinstance(capacity, NotMeasured):
        return None
    c = capacity.result
    rows = [
        _capacity_row(c, pt, rec, "confirmation" if pt.confirmation else "probe")
        for pt, rec in zip(c.points, capacity.records, strict=True)
    ]
    repeats = capacity.repeats.runs if capacity.repeats is not None else []
    repeated = [_capacity_row(c, r.point, r.records, f"repeat {j + 2}") for j, r in enumerate(repeats)]
    unit = " req/s" if c.knob == "rate" else ""
    bracket = tuple(fmt_sig(b) for b in c.bracket)
    low, high = c.range
    span = f"[{fmt_sig(low)}, {fmt_sig(high)})"
    answer_point = capacity.answer_point()
    answer = next((r for r in rows if r.point is answer_point), None)
    ends = _bracket_ends(c, rows)
    rows += repeated
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
        "ends": ends,
        "headline": headline,
    }


def _capacity_row(c, pt, records, kind: str) -> CapacityRow:
    check = pt.metrics.p99_check
    return CapacityRow(
        point=pt,
        records=records,
        n=check.n if check else None,
        sufficiency=check.sufficiency if check else None,
        attainment_ci=pt.metrics.goodput_ci.attainment if pt.metrics.goodput_ci else None,
        p99_ci=pt.metrics.percentile_ci.get(f"{c.slo.p99_metric}.p99"),
        kind=kind,
    )


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


def _libraries(system) -> dict:
    """Tool-side and serving-side libraries, each as one 'name version' list (a serving side not inspected:
    its NotMeasured, which says why)."""
    serving = system.serving_libraries
    return {
        "tool": [f"{k} {v}" for k, v in sorted(system.libraries.items())],
        "serving": serving
        if isinstance(serving, NotMeasured)
        else [f"{k} {v}" for k, v in sorted(serving.items())],
    }


def _system_prompt_rows(load: LoadSection | NotMeasured) -> list[tuple[str, str, list | None]]:
    """Each load point's and each capacity search's workload and the system prompts it sent (None: not
    recorded: an older factsheet)."""
    if isinstance(load, NotMeasured):
        return []
    rows = [
        (p.result.label, p.result.workload.profile or "synthetic", p.result.workload.system_prompts)
        for p in load.points
    ]
    searches = [(load.profile(), load.capacity)] + [
        (c.workload.profile, c.capacity) for c in load.compared_workloads
    ]
    for profile, section in searches:
        if not isinstance(section, NotMeasured):
            runs = len(section.records)
            rows.append(
                (f"capacity search ({runs} run{'s' if runs != 1 else ''})", profile, section.system_prompts)
            )
    return _merged(rows)


def _merged(rows: list[tuple[str, str, list | None]]) -> list[tuple[str, str, list | None]]:
    """Rows that sent the same system prompts under the same workload, as one row naming each of them."""
    merged: dict[tuple, tuple[list[str], str, list | None]] = {}
    for name, profile, prompts in rows:
        key = (profile, None if prompts is None else tuple(p.model_dump_json() for p in prompts))
        merged.setdefault(key, ([], profile, prompts))[0].append(name)
    return [(", ".join(names), profile, prompts) for names, profile, prompts in merged.values()]


def _definitions(load: LoadSection | NotMeasured) -> list[tuple[str, str]]:
    """Every term the load figures use, with the methods behind its percentiles and intervals."""
    if isinstance(load, NotMeasured) or not load.points:
        return []
    m0 = load.points[0].result.metrics
    rows = [(LATENCY_LABELS.get(k, label(k)), v) for k, v in m0.definitions.items()]
    rows.append(("percentile", load.percentile_method))
    if m0.sample_sufficiency:
        rows.append(("early stopping", next(iter(m0.sample_sufficiency.values())).rule))
    if any(s.verdict is not None for s in m0.sample_sufficiency.values()):
        rows.append(("verdict of a p99 claim", VERDICT_RULE.format(q="99")))
    if m0.percentile_ci:
        rows.append(("percentile CI method", next(iter(m0.percentile_ci.values())).method))
    if m0.goodput_ci:
        rows.append(("goodput CI method", m0.goodput_ci.method))
    if not isinstance(load.capacity, NotMeasured):
        c = load.capacity.result
        rows += [("capacity search", c.method), ("capacity pass rule", f"a point passes when {c.pass_rule}"),
                 ("capacity range", c.range_method)]  # fmt: skip
    if server_view_rows(load):
        rows.append(("server view", SERVER_VIEW_METHOD))
    tested = [r.saturation for r in server_view_rows(load) if r.saturation is not None]
    if tested:
        rows.append(("saturation test", tested[0].rule))
    measured = [r.load for r in run_loads(load) if r.measured]
    if measured:
        rows.append(("host load", f"{measured[0].method}. Rule: {measured[0].rule}"))
    return rows


SERVER_VIEW_METHOD = (
    "what the target's own Prometheus /metrics said while each run went on (vLLM's names; scraped on a fixed "
    "schedule, interval stated). Counters and histograms: their increase from the scrape before the first send "
    "to the one after the last response; gauges: mean and max over the scrapes while requests were in flight. "
    "Server TTFT and E2EL are estimated from histogram buckets (Prometheus histogram_quantile: linear "
    "interpolation inside the bucket); the bucket that holds each quantile, shown beside it, is its resolution"
)


def weak_p99(metrics: LoadMetrics) -> list[str]:
    """Metrics whose p99 exists but rests on too few samples to decide (no sample at all is reported as
    such; a p99 whose interval lies wholly above its threshold is a conclusive fail, not a weak figure)."""
    suff = metrics.sample_sufficiency
    return [
        k
        for k in metrics.insufficient_samples
        if getattr(metrics, k).n > 0 and (k not in suff or suff[k].verdict != "conclusive_fail")
    ]


@dataclass(frozen=True)
class CoverageGroup:
    """The items of one governance form that get one answer here, listed together."""

    mark: str  # the legend's key: measured, declared or not_measured
    words: str
    items: list[str]


def coverage_groups(coverage) -> list[tuple[str, list[CoverageGroup]]]:
    """Each form's items grouped by their answer (measured here, declared by the author, outside a factsheet's
    scope, not claimed), in the form's order: a reviewer reads three lists, not a row per item."""
    out = []
    for key, framework in coverage.frameworks.items():
        groups: dict[tuple[str, str], list[str]] = {}
        for i in coverage.items:
            if i.framework == key:
                groups.setdefault(_coverage_answer(key, i), []).append(i.item)
        order = ("measured", "declared", "not_measured")
        ranked = sorted(groups.items(), key=lambda g: order.index(g[0][0]))
        out.append((framework, [CoverageGroup(mark, words, items) for (mark, words), items in ranked]))
    return out


def _coverage_answer(framework: str, item) -> tuple[str, str]:
    nist = framework == "nist-ai-600-1"
    if item.answer == "measured":
        return "measured", "evidence in this factsheet" if nist else "measured here"
    if item.answer == "declared":
        return "declared", "declared by the author"
    if nist:
        return "not_measured", "not assessed by this tool"
    return "not_measured", "not in a factsheet's scope" if item.status == "outside" else "not claimed"
