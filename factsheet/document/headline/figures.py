"""The headline computed from a factsheet: each page-1 figure with its value, interval, n, verdict, source
and rule. Nothing here is new evidence: every value is read from the sheet (pass@1's Clopper–Pearson
interval over tasks is computed from its stated rate and task count)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from factsheet.document.headline import rebuild
from factsheet.document.headline.repeated import Repeated, repeated
from factsheet.document.headline.select import Run, answer_run, confirmation_run, informative_run
from factsheet.document.headline_model import Figure, Headline, Interval, Rebuild, Verdict
from factsheet.document.rules import rule_set
from factsheet.document.schema import CapacitySection, Factsheet
from probes.core.measurement import NotMeasured
from probes.load.capacity import RANGE_METHOD
from probes.load.metrics import LATENCY_LABELS, LoadMetrics
from probes.load.stats import PROPORTION_CI_METHOD, proportion_ci

LATENCIES = ("e2el_ms", "ttft_ms", "tpot_ms")  # page 1's p99s, in its order
OPEN_BRACKET = "every probe up to the search's maximum passed"
RULE_PASS_AT_1 = "HumanEval+ pass@1 with the plus tests where they ran, else the base tests"
RULE_ENERGY = "gross energy over the headline load point's window, per 1,000 requests"
# A p99's sample verdict (probes.load.stats.claim_verdict) as a headline verdict.
_P99_VERDICT: dict[str, Verdict] = {
    "conclusive_pass": "sufficient",
    "conclusive_fail": "conclusive_fail",
    "insufficient": "insufficient",
}


@dataclass(frozen=True)
class _OfRun:
    """A page-1 figure as read from one run's metrics: its value, and its within-run interval (both ends, or
    None) that bounds how narrow a rebuild interval of it may be (rebuild.WIDEN_METHOD)."""

    value: Callable[[LoadMetrics], float | None]
    interval: Callable[[LoadMetrics], tuple[float, float] | None]
    share: bool = False


def _p99_of(metric: str) -> _OfRun:
    def ci(m: LoadMetrics) -> tuple[float, float] | None:
        q = m.percentile_ci.get(f"{metric}.p99")
        return q.bounds() if q is not None else None

    return _OfRun(lambda m: getattr(m, metric).p(99), ci)


_P99S = {f"{k}.p99": _p99_of(k) for k in LATENCY_LABELS}
_OF_RUN = {f"{k}.p99": _P99S[f"{k}.p99"] for k in LATENCIES} | {
    "goodput": _OfRun(lambda m: m.goodput, lambda m: m.goodput_ci.bounds() if m.goodput_ci else None),
    "slo_attainment": _OfRun(
        lambda m: m.slo_attainment,
        lambda m: m.goodput_ci.attainment.bounds() if m.goodput_ci else None,
        share=True,
    ),
}


# The run figures page 1 states a rebuild interval for, when their run was repeated.
REBUILD_FIGURES = tuple(_OF_RUN)


def run_interval(figure: str, m: LoadMetrics) -> tuple[float, float] | None:
    """A run's own 95 % interval of `figure` (a page-1 figure, or any latency percentile `<metric>.p<q>` the
    run states an interval for): both ends, or None."""
    if figure in _OF_RUN:
        return _OF_RUN[figure].interval(m)
    ci = m.percentile_ci.get(figure)
    return ci.bounds() if ci is not None else None


def headline(sheet: Factsheet) -> Headline:
    """Page 1's figures of `sheet`, in page order."""
    run = informative_run(sheet.load)
    rules = rule_set(sheet.schema_version)
    guards = rebuild.Guards.of(rules)
    return Headline(
        figures=[
            *_capacities(sheet, guards),
            *_run_figures(sheet, run, guards),
            _pass_at_1(sheet),
            _energy(sheet),
        ],
        void=void_reason(sheet) if "replies/outcome" in rules else None,
    )


def void_reason(sheet: Factsheet) -> str | None:
    """Why the sheet's load measurement is void (one line), or None: a run that lost its target (a load point
    stopped by consecutive connection failures, or a capacity probe whose every request failed to connect),
    or load points none of whose requests completed. Read from the sheet alone, so `validate` recomputes it."""
    load = sheet.load
    if isinstance(load, NotMeasured) or not load.points:
        return None
    for entry in load.points:
        res = entry.result
        if res.stop_reason == "target_unreachable":
            counts = res.requests
            sent = (
                f"{counts.sent} of {counts.planned}" if counts else f"{res.sent} of {res.point.num_requests}"
            )
            return (
                f"target lost mid-run: load point {res.label} stopped after {sent} requests "
                f"({res.not_sent} never sent): {res.aborted}"
            )
    if not isinstance(load.capacity, NotMeasured):
        for p in load.capacity.result.points:
            m = p.metrics
            if m.measured and m.completed == 0 and m.errors.get("connect", 0) == m.measured:
                return (
                    f"target lost mid-run: capacity probe at {p.value:g} reached the target with none of its "
                    f"{m.measured} requests"
                )
    metrics = [e.result.metrics for e in load.points]
    if all(m.completed == 0 for m in metrics):
        truncated, measured = sum(m.truncated for m in metrics), sum(m.measured for m in metrics)
        return (
            f"nothing completed: 0 of {measured} measured requests of {len(metrics)} load point(s) completed "
            f"({truncated} truncated, {measured - truncated} failed)"
        )
    return None


def stated_or_computed(sheet: Factsheet) -> Headline:
    """The headline the sheet states, or (a document older than schema 1.6.0) the one computed from it.
    Read it from a sheet that validated: `validate` vouches that the stated one is the computed one."""
    return sheet.headline if sheet.headline is not None else headline(sheet)


def _nm(id: str, label: str, unit: str, reason: str, source: str, rule: str) -> Figure:
    return Figure(id=id, label=label, value=None, unit=unit, interval=None, n=None, verdict="not_measured",
                  source=source, rule=rule, note=reason)  # fmt: skip


# --- capacity at SLO ------------------------------------------------------------------------------------


def _capacities(sheet: Factsheet, guards: rebuild.Guards) -> list[Figure]:
    """The load section's capacity, then each compared workload's, each naming its profile."""
    if isinstance(sheet.load, NotMeasured):
        return [_nm("capacity_at_slo", "Capacity at SLO", "", sheet.load.reason, "/load", RULE_ANSWER_WORDS)]
    out = [_capacity("capacity_at_slo", sheet.load.capacity, "/load/capacity", sheet.load.profile(), guards)]
    for k, c in enumerate(sheet.load.compared_workloads):
        base = f"/load/compared_workloads/{k}/capacity"
        out.append(
            _capacity(f"capacity_at_slo.{c.workload.profile}", c.capacity, base, c.workload.profile, guards)
        )
    return out


RULE_ANSWER_WORDS = (
    "the highest probed value whose last run passed the SLO (probes.load.capacity.answer), stated with the "
    "run at it"
)


def capacity_figure(cap: CapacitySection, profile: str) -> Figure:
    """A capacity section's page-1 figure on its own (pointers relative to the section): what `diff` states
    of each side."""
    return _capacity("capacity_at_slo", cap, "", profile, rebuild.Guards(floor=True, widen=True))


def _capacity(
    id: str, cap: CapacitySection | NotMeasured, base: str, profile: str, guards: rebuild.Guards
) -> Figure:
    label = "Capacity at SLO"
    if isinstance(cap, NotMeasured):
        return _nm(id, label, "", cap.reason, base, RULE_ANSWER_WORDS).model_copy(update={"profile": profile})
    r = cap.result
    unit = "req/s" if r.knob == "rate" else "concurrent users"
    run = answer_run(cap, base) or confirmation_run(cap, base)  # no answer: the run that showed none meets
    rests_on = [f"p99 {LATENCY_LABELS.get(r.slo.p99_metric, r.slo.p99_metric)} ≤ "
                f"{r.slo.thresholds()[r.slo.p99_metric]:g} ms"]  # fmt: skip
    if r.min_attainment is not None:
        rests_on.append(f"SLO attainment ≥ {r.min_attainment:.1%} (min_attainment)")
    low, high = r.range
    interval = None if low is None and high is None else Interval(lower=low, upper=high, method=RANGE_METHOD)
    verdict, note = _capacity_verdict(cap, run)
    return Figure(
        id=id, label=label, value=r.capacity, unit=unit, lower_bound=verdict == "lower_bound",
        interval=interval, n=run.metrics.measured if run else None, verdict=verdict,
        source=run.pointer if run else f"{base}/result", run=run.where if run else None,
        rule=RULE_ANSWER_WORDS, note=note, profile=profile,
        slo_attainment=run.metrics.slo_attainment if run and r.capacity is not None else None,
        rests_on=rests_on, rebuild=_capacity_rebuild(cap, base, guards),
    )  # fmt: skip


def _capacity_rebuild(cap: CapacitySection, base: str, guards: rebuild.Guards) -> Rebuild | None:
    """A capacity's repeats: its run's p99 metric over them, and how many passed the pass rule."""
    rep = repeated(cap, base)
    if rep is None:
        return None
    metric = cap.result.slo.p99_metric
    of = f"p99 {LATENCY_LABELS.get(metric, metric)} of the capacity's run (ms)"
    return _rebuild(rep, of, _P99S[f"{metric}.p99"], guards, passed=sum(r.passed for r in rep.runs))


def _rebuild(
    rep: Repeated, of: str, figure: _OfRun, guards: rebuild.Guards, passed: int | None = None
) -> Rebuild:
    """`figure` over the repeats of `rep`, with the guards of the document's version (rebuild.Guards)."""
    values = [figure.value(r.metrics) for r in rep.runs]
    within = [figure.interval(r.metrics) for r in rep.runs] if guards.widen else None
    sources = [r.pointer for r in rep.runs]
    busy = sum(r.busy for r in rep.runs)
    return rebuild.summary(of, values, sources, rep.isolation, passed=passed, busy=busy, floor=guards.floor,
                           within=within, share=figure.share)  # fmt: skip


def _capacity_verdict(cap: CapacitySection, run: Run | None) -> tuple[Verdict, str]:
    """What the search established about its capacity, and the verdict that says so."""
    r = cap.result
    if r.capacity is None:
        verdict = p99_verdict(run.metrics, r.slo.p99_metric) if run else "insufficient"
        note = f"no probed {r.knob} passed ({r.stop_reason})"
        return ("conclusive_fail" if verdict == "conclusive_fail" else "insufficient"), note
    if r.confirmed is False:
        failed = [f"{p.value:g}" for p in r.points if p.confirmation and not p.passed]
        rep = repeated(cap, "")
        if rep is not None and cap.result.points[rep.index].passed and not all(x.passed for x in rep.runs):
            # schema >= 1.8.0: the repeats decided (REPEATS_RULE); before, a failed repeat left the answer
            held = sum(x.passed for x in rep.runs)
            failed.append(
                f"{cap.result.points[rep.index].value:g} (held in {held} of its {len(rep.runs)} runs: repeats)"
            )
        return "not_confirmed", (
            f"not confirmed: the long confirmation run(s) at {r.knob} {', '.join(failed)} failed; established: "
            f"the search probes passed at {r.capacity:g} (short runs, indicative)"
        )
    if r.bracket[1] is None:
        if r.search is not None and r.search.rule == "bracketing":  # schema >= 1.10.0: the cap, or the points
            return "lower_bound", f"≥ {r.capacity:g} ({r.stop_reason.split('; ')[0]})"
        return "lower_bound", f"≥ {r.capacity:g} ({OPEN_BRACKET})"
    if r.insufficient_samples:
        return "insufficient", "the p99 at the capacity rests on too few samples (MLPerf early stopping)"
    return "sufficient", ""


# --- the run page 1 states ------------------------------------------------------------------------------


def p99_verdict(m: LoadMetrics, metric: str) -> Verdict:
    """A p99's verdict from its sample sufficiency (before schema 1.3.0, which recorded no verdict: whether
    MLPerf early stopping's n was reached)."""
    suff = m.sample_sufficiency.get(metric)
    if suff is None:
        return "insufficient"
    if suff.verdict is not None:
        return _P99_VERDICT[suff.verdict]
    return "sufficient" if suff.sufficient else "insufficient"


def _run_figures(sheet: Factsheet, run: Run | None, guards: rebuild.Guards) -> list[Figure]:
    labels = [(f"{k}.p99", f"p99 {LATENCY_LABELS.get(k, k)}", "ms") for k in LATENCIES]
    labels += [("goodput", "Goodput", "req/s"), ("slo_attainment", "SLO attainment", "fraction")]
    if run is None or isinstance(sheet.load, NotMeasured):
        reason = sheet.load.reason if isinstance(sheet.load, NotMeasured) else "no load point"
        return [_nm(id, label, unit, reason, "/load", RULE_HEADLINE_WORDS) for id, label, unit in labels]
    out = [_p99(run, k, label) for k, (_, label, _) in zip(LATENCIES, labels, strict=False)]
    out += [_goodput(run), _attainment(run)]
    rep = repeated(sheet.load.capacity, "/load/capacity")
    if rep is None or rep.runs[0].pointer != run.pointer:
        return out
    # The figures' run was repeated: each figure over the repeats, with its rebuild interval.
    return [f.model_copy(update={"rebuild": _rebuild(rep, "the figure", _OF_RUN[f.id], guards)}) for f in out]


RULE_HEADLINE_WORDS = "the capacity's run (see the capacity's rule), else the headline load point"


def _where(run: Run, id: str, label: str, unit: str) -> dict:
    return {"id": id, "label": label, "unit": unit, "source": f"{run.pointer}/metrics", "run": run.where,
            "rule": run.rule}  # fmt: skip


def _p99(run: Run, metric: str, label: str) -> Figure:
    m = run.metrics
    dist = getattr(m, metric)
    value = dist.p(99)
    if value is None:
        return Figure(**_where(run, f"{metric}.p99", label, "ms"), value=None, interval=None, n=dist.n,
                      verdict="not_measured", note="no completed request")  # fmt: skip
    ci = m.percentile_ci.get(f"{metric}.p99")
    interval = Interval(lower=ci.lower, upper=ci.upper, method=ci.method) if ci else None
    suff = m.sample_sufficiency.get(metric)
    note = ""
    if suff is not None and suff.verdict is None and not suff.sufficient and suff.n_required is not None:
        note = f"too few samples ({suff.n_required} needed)"
    return Figure(
        **_where(run, f"{metric}.p99", label, "ms"), value=value, interval=interval, n=dist.n,
        verdict=p99_verdict(m, metric), threshold_ms=suff.threshold_ms if suff else None, note=note,
    )  # fmt: skip


def _goodput(run: Run) -> Figure:
    m = run.metrics
    where = _where(run, "goodput", "Goodput", "req/s")
    if m.goodput is None:
        return Figure(**where, value=None, interval=None, n=m.measured, verdict="not_measured",
                      note="the spec sets no SLO threshold")  # fmt: skip
    g = m.goodput_ci
    interval = Interval(lower=g.lower, upper=g.upper, method=g.method) if g and g.lower is not None else None
    return Figure(**where, value=m.goodput, interval=interval, n=m.measured,
                  verdict="sufficient" if interval else "insufficient")  # fmt: skip


def _attainment(run: Run) -> Figure:
    m = run.metrics
    where = _where(run, "slo_attainment", "SLO attainment", "fraction")
    if m.slo_attainment is None:
        return Figure(**where, value=None, interval=None, n=m.measured, verdict="not_measured",
                      note="the spec sets no SLO threshold")  # fmt: skip
    a = m.goodput_ci.attainment if m.goodput_ci else None
    interval = Interval(lower=a.lower, upper=a.upper, method=a.method) if a and a.lower is not None else None
    return Figure(**where, value=m.slo_attainment, interval=interval, n=m.measured,
                  verdict="sufficient" if interval else "insufficient")  # fmt: skip


# --- pass@1 and energy ----------------------------------------------------------------------------------


def _pass_at_1(sheet: Factsheet) -> Figure:
    id, label, source = "pass_at_1", "pass@1", "/accuracy"
    if isinstance(sheet.accuracy, NotMeasured):
        return _nm(id, label, "fraction", sheet.accuracy.reason, source, RULE_PASS_AT_1)
    r = sheet.accuracy.result
    tests = "plus" if r.pass_rates.plus else "base"
    v = (r.pass_rates.plus or r.pass_rates.base).get("pass@1")
    source = f"/accuracy/result/pass_rates/{tests}/pass@1"
    if v is None:
        return _nm(id, label, "fraction", "pass@1 not reported", source, RULE_PASS_AT_1)
    n, k = r.pass_rates.n_tasks, r.pass_rates.n_samples_per_task
    interval = None
    if k == 1 and n:
        ci = proportion_ci(round(v * n), n)
        interval = Interval(lower=ci.lower, upper=ci.upper, method=f"{PROPORTION_CI_METHOD} over tasks")
    words = "base+plus" if tests == "plus" else "base"
    return Figure(id=id, label=label, value=v, unit="fraction", interval=interval, n=n, verdict="sufficient",
                  source=source, run=f"{r.benchmark}, {words} tests, {n} tasks × {k} sample(s)",
                  rule=RULE_PASS_AT_1)  # fmt: skip


def _energy(sheet: Factsheet) -> Figure:
    id, label, unit = "energy_wh_per_1000_requests", "Energy per 1,000 requests", "Wh/1000 requests"
    en = sheet.energy
    source = "/energy"
    if isinstance(en, NotMeasured):
        return _nm(id, label, unit, en.reason, "/energy", RULE_ENERGY)
    if isinstance(en.energy, NotMeasured):
        return _nm(id, label, unit, en.energy.reason, "/energy/energy", RULE_ENERGY)
    total = en.energy.total
    if isinstance(total, NotMeasured):
        return _nm(id, label, unit, total.reason, "/energy/energy/total", RULE_ENERGY)
    q = total.gross.wh_per_1000_requests
    source = "/energy/energy/total/gross/wh_per_1000_requests"
    if isinstance(q, NotMeasured):
        return _nm(id, label, unit, q.reason, source, RULE_ENERGY)
    return Figure(id=id, label=label, value=q.value, unit=q.unit, interval=None, n=q.n, verdict="sufficient",
                  source=source, run=f"gross, {total.boundary}", rule=RULE_ENERGY)  # fmt: skip
