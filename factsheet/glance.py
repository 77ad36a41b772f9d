"""The reviewer's first page: the headline figures, each with its CI or sufficiency and a link to its section.

Every value is read from the factsheet (nothing computed here is new evidence, except pass@1's
Clopper–Pearson interval over tasks); a figure that is absent says why. The load figures come from the most
informative run (`informative_run`): the capacity confirmation when there is one, and a p99 states what its
samples decide (`probes.load.stats.claim_verdict`: conclusive pass, conclusive fail, or insufficient).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from factsheet.schema import CapacitySection, Factsheet, LoadSection, headline_index
from probes.core.measurement import NotMeasured
from probes.load.metrics import LATENCY_LABELS, LoadMetrics
from probes.load.stats import VERDICT_NAMES, proportion_ci
from probes.server_view import ServerView

Status = Literal["ok", "bad", "nm", "plain"]


@dataclass(frozen=True)
class GlanceRow:
    label: str
    value: str
    detail: str
    href: str
    status: Status = "plain"


def _num(v: float, digits: int = 1) -> str:
    return f"{v:,.{digits}f}"


def glance_rows(sheet: Factsheet) -> list[GlanceRow]:
    return [
        *_capacities(sheet),
        *_headline(sheet),
        _pass_at_1(sheet),
        _energy(sheet),
        _tuning(sheet),
        _compliance(sheet),
    ]


def _nm(label: str, reason: str, href: str) -> GlanceRow:
    return GlanceRow(label, "not measured", reason, href, "nm")


def _capacities(sheet: Factsheet) -> list[GlanceRow]:
    """Capacity at SLO: the load section's, then each compared workload's beside it, each naming its workload
    profile and the prefix-cache hit rate the server reported over its answer's run (where scraped)."""
    label = "Capacity at SLO"
    if isinstance(sheet.load, NotMeasured):
        return [_nm(label, sheet.load.reason, "#load")]
    compared = sheet.load.compared_workloads
    if not compared:
        return [_capacity(label, sheet.load.capacity, informative_run(sheet.load))]
    own = f"{label}, {sheet.load.profile()}"
    rows = [_capacity(own, sheet.load.capacity, informative_run(sheet.load), by_profile=True)]
    for c in compared:
        name = c.workload.profile
        rows.append(_capacity(f"{label}, {name}", c.capacity, _confirmation(c.capacity), by_profile=True))
    return rows


def _capacity(
    label: str, cap: CapacitySection | NotMeasured, run: Run | None, by_profile: bool = False
) -> GlanceRow:
    href = "#capacity-comparison" if by_profile else "#load"
    if isinstance(cap, NotMeasured):
        return _nm(label, cap.reason, href)
    r = cap.result
    if r.capacity is None:
        evidence = f": {run.where} has {_p99_words(run)}" if run is not None and run.confirmation else ""
        return GlanceRow(
            label,
            f"no {r.knob} meets the SLO",
            f"no probed {r.knob} passed ({r.stop_reason}){evidence}",
            href,
            "bad",
        )
    enough = "rests on too few samples" if r.insufficient_samples else "rests on enough samples"
    unit = "req/s" if r.knob == "rate" else "concurrent users"
    hits = _hit_rate(cap) if by_profile else ""
    return GlanceRow(
        label,
        f"{r.capacity:g} {unit}",
        f"p99 {r.slo.p99_metric} at that point {enough} (MLPerf early stopping); {len(r.points)} points probed"
        + hits,
        href,
        "bad" if r.insufficient_samples else "ok",
    )


def _hit_rate(cap: CapacitySection) -> str:
    value, why = answer_hit_rate(cap)
    if value is None:
        return f"; prefix-cache hit rate not measured ({why})"
    kind = "confirmation" if cap.answer_point().confirmation else "probe"
    return f"; prefix-cache hit rate {value:.0%} (server's /metrics over its {kind} run)"


def answer_hit_rate(cap: CapacitySection | NotMeasured) -> tuple[float | None, str]:
    """The server's prefix-cache hit rate over the answer's last run (its confirmation where there is one),
    or None with the reason: page 1 and the load section's comparison both state it from here."""
    point = None if isinstance(cap, NotMeasured) else cap.answer_point()
    if point is None:
        return None, "no run at an answer"
    view = point.server_view
    if not isinstance(view, ServerView):
        return None, view.reason if isinstance(view, NotMeasured) else "no server view"
    rate = view.prefix_cache_hit_rate
    if isinstance(rate, NotMeasured):
        return None, rate.reason
    return rate.value, "" if rate.value is not None else "nothing was looked up"


def _confirmation(cap: CapacitySection | NotMeasured) -> Run | None:
    """A capacity search's last confirmation run, as page 1 states it; None when it ran none."""
    if isinstance(cap, NotMeasured):
        return None
    confirmations = [p for p in cap.result.points if p.confirmation]
    if not confirmations:
        return None
    last, knob = confirmations[-1], cap.result.knob
    value = f"{last.value:g} req/s" if knob == "rate" else f"{last.value:g}"
    n = last.metrics.measured
    return Run(last.metrics, f"the capacity confirmation run at {knob} {value} ({n} requests)", True)


@dataclass(frozen=True)
class Run:
    """The run page 1 states: its figures and where it comes from, in words."""

    metrics: LoadMetrics
    where: str
    confirmation: bool


def informative_run(load: LoadSection | NotMeasured) -> Run | None:
    """The most informative run: the capacity search's confirmation when there is one (the long run that
    measures the answer; the last one, on which the search settled), else the headline load point (most
    requests completed). None when nothing was run."""
    if isinstance(load, NotMeasured):
        return None
    confirmation = _confirmation(load.capacity)
    if confirmation is not None:
        return confirmation
    i = headline_index(load.points)
    if i is None:
        return None
    res = load.points[i].result
    return Run(res.metrics, f"{res.label} (headline load point: most requests completed)", False)


def _p99_words(run: Run) -> str:
    """The SLO's p99 of `run` with its interval against the threshold, and what the samples decide."""
    m = run.metrics
    check = m.p99_check
    if check is None or check.p99_ms is None:
        return "no p99: nothing completed"
    name = LATENCY_LABELS.get(check.metric, check.metric)
    ci = m.percentile_ci.get(f"{check.metric}.p99")
    bounds = f", 95 % CI [{_num(ci.lower, 0)}, {_num(ci.upper, 0)}] ms" if ci and _bounded(ci) else ""
    verdict = check.sufficiency.verdict if check.sufficiency else None
    return (
        f"p99 {name} {_num(check.p99_ms, 0)} ms{bounds} against the {_num(check.threshold_ms, 0)} ms SLO "
        f"(n {check.n}): {_verdict_words(verdict)}"
    )


def _bounded(ci) -> bool:
    return ci.lower is not None and ci.upper is not None


_WHY = {
    "conclusive_pass": "MLPerf early stopping supports it",
    "conclusive_fail": "the 95 % CI lies wholly above the threshold",
    "insufficient": "the samples cannot decide",
}


def _verdict_words(verdict: str | None) -> str:
    if verdict is None:  # a factsheet older than schema 1.3.0, which records no verdict
        return "no verdict recorded"
    return f"{VERDICT_NAMES[verdict]} ({_WHY[verdict]})"


def _headline(sheet: Factsheet) -> list[GlanceRow]:
    run = informative_run(sheet.load)
    if run is None:
        reason = sheet.load.reason if isinstance(sheet.load, NotMeasured) else "no load point"
        return [_nm("Goodput", reason, "#load"), _nm("p99 E2EL", reason, "#load")]
    m, where = run.metrics, f"at {run.where}"
    if m.goodput is None:
        goodput = GlanceRow("Goodput", "not computed", "the spec sets no SLO threshold", "#load", "nm")
    else:
        ci = m.goodput_ci
        bounds = (
            f"95 % CI [{_num(ci.lower, 2)}, {_num(ci.upper, 2)}]" if ci and ci.lower is not None else "no CI"
        )
        att = f"SLO attainment {m.slo_attainment:.1%}" if m.slo_attainment is not None else ""
        goodput = GlanceRow(
            "Goodput", f"{_num(m.goodput, 2)} req/s", f"{bounds}; {att}; n {m.measured}; {where}", "#load"
        )
    return [goodput, _e2el(m, where)]


def _e2el(m: LoadMetrics, where: str) -> GlanceRow:
    p99 = m.e2el_ms.p(99)
    if p99 is None:
        return GlanceRow("p99 E2EL", "no completed request", where, "#load", "nm")
    ci = m.percentile_ci.get("e2el_ms.p99")
    bounds = (
        f"95 % CI [{_num(ci.lower)}, {_num(ci.upper)}] ms"
        if ci and _bounded(ci)
        else "95 % CI not defined at this n"
    )
    suff = m.sample_sufficiency.get("e2el_ms")
    verdict = None if suff is None else suff.verdict
    if verdict is not None:
        decided = f"; {_verdict_words(verdict)} against the {_num(suff.threshold_ms, 0)} ms SLO"
    elif suff is not None:  # no E2EL threshold (or a factsheet older than the verdict): sample count only
        decided = "; enough samples" if suff.sufficient else f"; too few samples ({suff.n_required} needed)"
    else:
        decided = ""
    bad = verdict in ("conclusive_fail", "insufficient") or (verdict is None and suff and not suff.sufficient)
    return GlanceRow(
        "p99 E2EL",
        f"{_num(p99)} ms",
        f"{bounds}; n {m.e2el_ms.n}{decided}; {where}",
        "#load",
        "bad" if bad else "plain",
    )


def _pass_at_1(sheet: Factsheet) -> GlanceRow:
    if isinstance(sheet.accuracy, NotMeasured):
        return _nm("pass@1", sheet.accuracy.reason, "#accuracy")
    r = sheet.accuracy.result
    rates = r.pass_rates.plus or r.pass_rates.base
    tests = "base+plus" if r.pass_rates.plus else "base"
    v = rates.get("pass@1")
    if v is None:
        return _nm("pass@1", "pass@1 not reported", "#accuracy")
    n = r.pass_rates.n_tasks
    detail = f"{r.benchmark}, {tests} tests, {n} tasks × {r.pass_rates.n_samples_per_task} sample(s)"
    if r.pass_rates.n_samples_per_task == 1 and n:
        ci = proportion_ci(round(v * n), n)
        detail = f"95 % CI [{ci.lower:.1%}, {ci.upper:.1%}] (Clopper–Pearson over tasks); {detail}"
    return GlanceRow("pass@1", f"{v:.1%}", detail, "#accuracy")


def _energy(sheet: Factsheet) -> GlanceRow:
    label = "Energy per 1,000 requests"
    en = sheet.energy
    for x in (en, getattr(en, "energy", None)):
        if isinstance(x, NotMeasured):
            return _nm(label, x.reason, "#energy")
    total = en.energy.total
    if isinstance(total, NotMeasured):
        return _nm(label, total.reason, "#energy")
    q = total.gross.wh_per_1000_requests
    if isinstance(q, NotMeasured):
        return _nm(label, q.reason, "#energy")
    return GlanceRow(
        label, f"{q.value:.4g} {q.unit}", f"gross, {total.boundary}; n {q.n} requests", "#energy"
    )


def _tuning(sheet: Factsheet) -> GlanceRow:
    label = "Tuner recommendation"
    if isinstance(sheet.tuning, NotMeasured):
        return _nm(label, sheet.tuning.reason, "#tuning")
    rec = sheet.tuning.recommended
    if isinstance(rec, NotMeasured):
        return GlanceRow(label, "none", rec.reason, "#tuning", "nm")
    ratio = sheet.tuning.goodput_ratio
    detail = (
        f"goodput × {ratio.value:.2f} vs default (95 % CI [{ratio.ci_low:.2f}, {ratio.ci_high:.2f}])"
        if not isinstance(ratio, NotMeasured)
        else f"goodput ratio not measured: {ratio.reason}"
    )
    return GlanceRow(label, rec.point.label(), f"{detail}; {rec.source}", "#tuning")


def _compliance(sheet: Factsheet) -> GlanceRow:
    c = sheet.compliance
    if isinstance(c, NotMeasured):
        return GlanceRow("Compliance", "no policy run", c.reason, "#compliance", "nm")
    counts = ", ".join(f"{n} {o.replace('_', ' ')}" for o, n in c.counts.items() if n)
    names = ", ".join(f"{p.id} {p.version}" for p in c.policies)
    # The verdict as the build states it: rendering re-runs nothing, so the page says so and where the
    # report is; `factsheet validate` re-runs the policies on the records.
    return GlanceRow(
        "Compliance",
        f"{c.verdict.upper()} (build's gate)",
        f"as stated by the build, not re-checked here: {names}: {counts}; report {c.report}; "
        "`factsheet validate` re-runs the policies on the raw records",
        "#compliance",
        "ok" if c.verdict == "pass" else "bad",
    )
