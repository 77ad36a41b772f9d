"""The reviewer's first page: the headline figures, each with its CI or sufficiency and a link to its section.

Every figure is the headline's (`factsheet.document.headline`: which run each comes from is chosen there, and
`validate` recomputes it from the rest of the sheet); this module only words them. A figure that is absent
says why; a p99 states what its samples decide (conclusive pass, conclusive fail, or insufficient); a
capacity whose search never failed is a lower bound, and one whose long confirmation failed is "not
confirmed", stated with what was established.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from factsheet.document.headline.figures import stated_or_computed
from factsheet.document.headline.select import Run, confirmation_run
from factsheet.document.headline_model import Figure, Headline, Rebuild
from factsheet.document.schema import CapacitySection, Factsheet
from probes.core.measurement import MISSING, NotMeasured
from probes.load.metrics import LATENCY_LABELS
from probes.load.stats import VERDICT_NAMES
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
    h = stated_or_computed(sheet)
    return [
        *_capacities(sheet, h),
        _goodput(h),
        _e2el(h.figure("e2el_ms.p99")),
        *_other_p99s(h),
        _pass_at_1(h.figure("pass_at_1")),
        _energy(h.figure("energy_wh_per_1000_requests")),
        _tuning(sheet),
        _compliance(sheet),
    ]


def _nm(label: str, reason: str, href: str) -> GlanceRow:
    return GlanceRow(label, "not measured", reason, href, "nm")


def _sections(sheet: Factsheet) -> dict[str, tuple[CapacitySection | NotMeasured, str]]:
    """Each capacity section by its headline figure's id, with its JSON pointer."""
    if isinstance(sheet.load, NotMeasured):
        return {}
    out = {"capacity_at_slo": (sheet.load.capacity, "/load/capacity")}
    for k, c in enumerate(sheet.load.compared_workloads):
        out[f"capacity_at_slo.{c.workload.profile}"] = (c.capacity, f"/load/compared_workloads/{k}/capacity")
    return out


def _capacities(sheet: Factsheet, h: Headline) -> list[GlanceRow]:
    """Capacity at SLO: the load section's, then each compared workload's beside it, each naming its workload
    profile and the prefix-cache hit rate the server reported over its answer's run (where scraped)."""
    figures, sections = h.capacities(), _sections(sheet)
    by_profile = len(figures) > 1
    rows = []
    for f in figures:
        label = f"Capacity at SLO, {f.profile}" if by_profile else "Capacity at SLO"
        cap, base = sections.get(f.id, (None, ""))
        rows.append(_capacity(label, f, cap, base, by_profile))
    return rows


def _capacity(label: str, f: Figure, cap, base: str, by_profile: bool) -> GlanceRow:
    href = "#capacity-comparison" if by_profile else "#load"
    if f.verdict == "not_measured" or not isinstance(cap, CapacitySection):
        return _nm(label, f.note, href)
    r = cap.result
    run = confirmation_run(cap, base)
    if f.value is None:
        evidence = f": {run.where} has {_p99_words(run)}" if run is not None and run.confirmation else ""
        return GlanceRow(label, f"no {r.knob} meets the SLO", f"{f.note}{evidence}", href, "bad")
    attainment = f"SLO attainment {f.slo_attainment:.1%} over {f.run}" if f.slo_attainment is not None else ""
    rests = f"rests on {' and '.join(f.rests_on)}"
    hits = _hit_rate(cap) if by_profile else ""
    amount = f"{f.value:g} {f.unit}"
    if f.verdict == "not_confirmed":
        return GlanceRow(label, "not confirmed", f"{f.note}; {rests}; {attainment}; {len(r.points)} points "
                         f"probed{hits}", href, "bad")  # fmt: skip
    enough = "rests on too few samples" if r.insufficient_samples else "rests on enough samples"
    value = f"≥ {amount}" if f.lower_bound else amount
    bound = f"{f.note}; " if f.lower_bound else ""
    return GlanceRow(
        label,
        value,
        f"{bound}{rests}; {attainment}; p99 {r.slo.p99_metric} at that point {enough} (MLPerf early "
        f"stopping); {len(r.points)} points probed{hits}{_repeats_words(f.rebuild)}",
        href,
        "bad" if r.insufficient_samples else "ok",
    )


def _repeats_words(rb: Rebuild | None) -> str:
    """A capacity's repeats: how many of its run's repeats passed, and its p99 metric over them."""
    if rb is None:
        return ""
    return f"; repeated {rb.k} times: {rb.passed} of {rb.k} passed; {rb.of}: {rebuild_words(rb, 0, ' ms')}"


def rebuild_words(rb: Rebuild | None, digits: int = 1, unit: str = "", percent: bool = False) -> str:
    """A figure's spread over its repeats and its rebuild interval, in words (empty without repeats)."""
    if rb is None:
        return ""

    def num(v: float | None) -> str:
        if v is None:
            return MISSING
        return f"{v:.1%}" if percent else f"{_num(v, digits)}{unit}"

    values = ", ".join(num(v) for v in rb.values)
    busy = f"; {rb.busy} of {rb.k} on a busy host" if rb.busy else ""
    if rb.interval is None:
        return f"over {rb.k} repeats: {values} (fewer than 3 values: no rebuild interval){busy}"
    sd = f"{rb.sd:.2%}" if percent else _num(rb.sd, digits + 1)
    # The interval's method and the repeats' isolation are stated once, under the table (`rebuild_method`).
    return (
        f"rebuild interval [{num(rb.interval.lower)}, {num(rb.interval.upper)}] (k {rb.k}; repeats {values}; "
        f"mean {num(rb.mean)}, sd {sd}){busy}"
    )


REBUILD_METHOD = "95 % prediction interval for the next build's value from the k repeats of its run: mean ± t(k − 1)·s·√(1 + 1/k)"


def rebuild_method(sheet: Factsheet) -> str | None:
    """The rebuild intervals' method and how their repeats were separated, said once for every headline figure
    that has one (None: no figure was repeated)."""
    rebuilds = [f.rebuild for f in stated_or_computed(sheet).figures if f.rebuild is not None]
    if not rebuilds:
        return None
    isolations = "; ".join(dict.fromkeys(rb.isolation for rb in rebuilds))
    return f"Rebuild interval: the 95 % prediction interval for the next build's value (Appendix A). Repeats: {isolations}."


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


def _p99_words(run: Run) -> str:
    """The SLO's p99 of `run` with its interval against the threshold, and what the samples decide."""
    m = run.metrics
    check = m.p99_check
    if check is None or check.p99_ms is None:
        return "no p99: nothing completed"
    name = LATENCY_LABELS.get(check.metric, check.metric)
    ci = m.percentile_ci.get(f"{check.metric}.p99")
    bounds = f", 95 % CI [{_num(ci.lower, 0)}, {_num(ci.upper, 0)}] ms" if ci and ci.bounds() else ""
    verdict = check.sufficiency.verdict if check.sufficiency else None
    return (
        f"p99 {name} {_num(check.p99_ms, 0)} ms{bounds} against the {_num(check.threshold_ms, 0)} ms SLO "
        f"(n {check.n}): {_verdict_words(verdict)}"
    )


_WHY = {
    "conclusive_pass": "MLPerf early stopping supports it",
    "conclusive_fail": "the 95 % CI lies wholly above the threshold",
    "insufficient": "the samples cannot decide",
}
# A headline p99 verdict as the p99 claim's (probes.load.stats.claim_verdict).
_CLAIM = {
    "sufficient": "conclusive_pass",
    "conclusive_fail": "conclusive_fail",
    "insufficient": "insufficient",
}


def _verdict_words(verdict: str | None) -> str:
    if verdict is None:  # an older factsheet, which records no verdict
        return "no verdict recorded"
    return f"{VERDICT_NAMES[verdict]} ({_WHY[verdict]})"


def _goodput(h: Headline) -> GlanceRow:
    f, att = h.figure("goodput"), h.figure("slo_attainment")
    if f.verdict == "not_measured" and f.run is None:
        return _nm("Goodput", f.note, "#load")
    if f.value is None:
        return GlanceRow("Goodput", "not computed", f.note, "#load", "nm")
    ci = f.interval
    bounds = f"95 % CI [{_num(ci.lower, 2)}, {_num(ci.upper, 2)}]" if ci else "no CI"
    attained = f"SLO attainment {att.value:.1%}" if att.value is not None else ""
    between = ""
    if f.rebuild is not None:
        between = f"; goodput {rebuild_words(f.rebuild, 2, ' req/s')}"
        between += f"; SLO attainment {rebuild_words(att.rebuild, percent=True)}" if att.rebuild else ""
    return GlanceRow(
        "Goodput", f"{_num(f.value, 2)} req/s", f"{bounds}; {attained}; n {f.n}; at {f.run}{between}", "#load"
    )


def _other_p99s(h: Headline) -> list[GlanceRow]:
    """p99 TTFT and TPOT beside p99 E2EL when their run was repeated: page 1 states every headline figure's
    rebuild interval."""
    rows = []
    for id in ("ttft_ms.p99", "tpot_ms.p99"):
        f = h.figure(id)
        if f is None or f.rebuild is None or f.value is None:
            continue
        rows.append(GlanceRow(f.label, f"{_num(f.value)} ms", f"{rebuild_words(f.rebuild, 1, ' ms')}; at {f.run}",
                              "#load"))  # fmt: skip
    return rows


def _e2el(f: Figure) -> GlanceRow:
    if f.run is None:
        return _nm("p99 E2EL", f.note, "#load")
    where = f"at {f.run}"
    if f.value is None:
        return GlanceRow("p99 E2EL", "no completed request", where, "#load", "nm")
    ci = f.interval
    bounds = (
        f"95 % CI [{_num(ci.lower)}, {_num(ci.upper)}] ms"
        if ci and ci.bounds()
        else "95 % CI not defined at this n"
    )
    if f.threshold_ms is not None:
        decided = f"; {_verdict_words(_CLAIM[f.verdict])} against the {_num(f.threshold_ms, 0)} ms SLO"
    else:  # no E2EL threshold: the sample count only
        decided = "; enough samples" if f.verdict == "sufficient" else f"; {f.note or 'too few samples'}"
    bad = f.verdict in ("conclusive_fail", "insufficient")
    between = f"; {rebuild_words(f.rebuild, 1, ' ms')}" if f.rebuild is not None else ""
    return GlanceRow(
        "p99 E2EL",
        f"{_num(f.value)} ms",
        f"{bounds}; n {f.n}{decided}; {where}{between}",
        "#load",
        "bad" if bad else "plain",
    )


def _pass_at_1(f: Figure) -> GlanceRow:
    if f.value is None:
        return _nm("pass@1", f.note, "#accuracy")
    detail = f.run
    if f.interval is not None:
        detail = (
            f"95 % CI [{f.interval.lower:.1%}, {f.interval.upper:.1%}] (Clopper–Pearson over tasks); {detail}"
        )
    return GlanceRow("pass@1", f"{f.value:.1%}", detail, "#accuracy")


def _energy(f: Figure) -> GlanceRow:
    label = "Energy per 1,000 requests"
    if f.value is None:
        return _nm(label, f.note, "#energy")
    return GlanceRow(label, f"{f.value:.4g} {f.unit}", f"{f.run}; n {f.n} requests", "#energy")


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
