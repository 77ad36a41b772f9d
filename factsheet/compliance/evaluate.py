"""Rules against a factsheet: each to one of five outcomes, with the figures that decided it.

Order of judgement for a rule on a field: not applicable (outside the factsheet, or its condition does not
hold) → not measured (the factsheet's own reason; never a pass) → evidence (estimated figure, missing or
altered raw records) → the comparison, on the confidence interval when the rule asks for one (the whole
interval on one side decides; an interval across the threshold is insufficient evidence) → sample
sufficiency (a pass on a percentile needs the samples MLPerf early stopping demands).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factsheet.compliance.evidence import (
    PointRecords,
    RecordsCheck,
    capacity_run_records,
    check_file,
    load_point_records,
)
from factsheet.compliance.paths import Resolved, resolve
from factsheet.compliance.policy import LoadedPolicy, PolicyError, Rule
from factsheet.compliance.report import (
    INTEGRITY_POLICY,
    INTEGRITY_RULE,
    INTEGRITY_TITLE,
    ComplianceReport,
    FactsheetRef,
    Figure,
    Integrity,
    Interval,
    PolicyApplied,
    RuleResult,
    count_outcomes,
)
from factsheet.compliance.support import Support, Unsupported, concrete_path, listing, reasons, support
from factsheet.document.compliance_summary import Outcome
from factsheet.document.schema import Factsheet, LoadPointEntry
from factsheet.document.stamp import tool_version, utc_now
from probes.accuracy.result import PassRates
from probes.core.measurement import Distribution
from probes.energy.figures import Quantity
from probes.load.capacity import CapacityPoint, CapacityResult
from probes.load.metrics import CI_CONFIDENCE, CLAIM_CONFIDENCE, LATENCY_METRICS, LoadMetrics
from probes.load.stats import SampleSufficiency, min_samples, proportion_ci, quantile_ci, sample_sufficiency
from tuner.estimates import Estimate

_OPS = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
    "!=": operator.ne,
}
_SECTIONS = {"identity", "system", "load", "accuracy", "energy", "tuning", "predictor", "provenance"}
_PERCENTILE = re.compile(r"^p(\d+(?:\.\d+)?)$")


class _Context:
    def __init__(self, sheet: Factsheet, folder: Path | None):
        self.sheet, self.folder = sheet, folder
        self.points: dict[str, PointRecords] = load_point_records(sheet, folder)
        # Re-derived before any rule is judged: no rule passes on a figure its records do not give.
        self.support: Support = support(sheet, folder)

    def unsupported(self, *resolved: Resolved) -> list[Unsupported]:
        return [u for r in resolved if r.ok for u in self.support.of(concrete_path(r))]


def evaluate(
    sheet: Factsheet,
    policies: list[LoadedPolicy],
    *,
    folder: Path | None,
    factsheet_path: str,
    factsheet_sha256: str,
    allow_insufficient: bool = False,
) -> ComplianceReport:
    ctx = _Context(sheet, folder)
    results = [
        _finish(_judge(ctx, rule, policy), policy.id, rule, allow_insufficient)
        for policy in policies
        for rule in policy.rules
    ]
    integrity = _integrity(ctx) if folder is not None else None
    if integrity is not None and integrity.outcome == "fail":
        results.append(_integrity_result(integrity))
    return ComplianceReport(
        factsheet=FactsheetRef(
            name=sheet.name, path=factsheet_path, sha256=factsheet_sha256, schema_version=sheet.schema_version
        ),
        policies=[
            PolicyApplied(**p.model_dump(exclude={"max_regression", "on_inconclusive"})) for p in policies
        ],
        allow_insufficient=allow_insufficient,
        verdict="fail" if any(r.gating for r in results) else "pass",
        counts=count_outcomes(results),
        results=results,
        integrity=integrity,
        generated_at=utc_now(),
        tool_version=tool_version(),
    )


def _integrity(ctx: _Context) -> Integrity:
    """Every figure the records determine, re-derived; any that is not, or a records file missing or altered,
    fails it. A policy cannot disable it, and --allow-insufficient does not soften it."""
    found, files = ctx.support.problems, ctx.support.files
    if found:
        reason = (
            f"{len(found)} figure(s) not supported by the {len(files)} raw-records file(s): {listing(found)}"
        )
    elif files:
        reason = f"every figure the {len(files)} raw-records file(s) determine re-derives to the stated value"
    else:
        reason = "the factsheet names no raw-records file: no figure to re-derive"
    return Integrity(
        outcome="fail" if found else "pass",
        reason=reason,
        records=files,
        discrepancies=[u.discrepancy for u in found],
    )


def _integrity_result(integrity: Integrity) -> RuleResult:
    return RuleResult(
        policy=INTEGRITY_POLICY,
        rule=INTEGRITY_RULE,
        title=INTEGRITY_TITLE,
        description="Built in, in every report: a rule can pass only on figures the raw records give.",
        severity="error",
        outcome="fail",
        gating=True,
        reason=integrity.reason,
        figures=[
            Figure(path="(every raw-records file)", value=len(integrity.records), records=integrity.records)
        ],
        section="provenance",
    )


def _finish(result: RuleResult, policy_id: str, rule: Rule, allow_insufficient: bool) -> RuleResult:
    gating = rule.severity == "error" and result.outcome in ("fail", "insufficient_evidence", "not_measured")
    downgraded = gating and result.outcome == "insufficient_evidence" and allow_insufficient
    return result.model_copy(
        update={
            "policy": policy_id,
            "gating": gating and not downgraded,
            "downgraded": downgraded,
            "section": _section(rule),
        }
    )


def _section(rule: Rule) -> str:
    path = rule.field or (rule.documents or [""])[0]
    head = path.split(".", 1)[0].split("[", 1)[0]
    if rule.check == "raw_records":
        return "provenance"
    return head if head in _SECTIONS else "summary"


def _result(
    rule: Rule, outcome: Outcome, reason: str, figures: list[Figure] | None = None, **kw
) -> RuleResult:
    return RuleResult(
        policy="",
        rule=rule.id,
        title=rule.title,
        description=rule.description,
        severity=rule.severity,
        outcome=outcome,
        gating=False,
        reason=reason,
        op=rule.op,
        threshold=kw.get("threshold", rule.threshold),
        unit=rule.unit,
        evidence_required=rule.evidence if rule.field else None,
        figures=figures or [],
        references=rule.references,
        section="summary",
    )


def _judge(ctx: _Context, rule: Rule, policy: LoadedPolicy) -> RuleResult:
    if rule.id in policy.disabled:
        return _result(rule, "not_applicable", f"disabled in {policy.disabled[rule.id]}")
    if rule.outside_factsheet is not None:
        return _result(rule, "not_applicable", f"outside this factsheet: {rule.outside_factsheet}")
    if rule.when is not None:
        cond = resolve(ctx.sheet, rule.when.field)
        fig = _plain_figure(cond, "condition")
        if not cond.ok:
            return _result(
                rule, "not_applicable", f"applies only when {_cond_text(rule)}; {_why(cond)}", [fig]
            )
        found = ctx.unsupported(cond)  # a made-up condition must not decide whether a rule applies
        if found:
            return _result(rule, _unsupported_outcome(found), f"condition {reasons(found)}", [fig])
        if not _compare(cond.value, rule.when.op, rule.when.value):
            return _result(
                rule, "not_applicable", f"applies only when {_cond_text(rule)}; it is {cond.value!r}", [fig]
            )
    if rule.check == "raw_records":
        return _raw_records(ctx, rule)
    if rule.documents is not None:
        return _documents(ctx, rule)
    return _field_rule(ctx, rule)


def _cond_text(rule: Rule) -> str:
    w = rule.when
    return f"{w.field} {w.op}{'' if w.op == 'exists' else ' ' + repr(w.value)}"


def _why(r: Resolved) -> str:
    return r.not_measured or r.missing or ""


def _compare(value: Any, op: str, threshold: Any) -> bool:
    if op == "exists":
        return value is not None
    try:
        return bool(_OPS[op](value, threshold))
    except TypeError:
        raise PolicyError(f"cannot compare {value!r} {op} {threshold!r} (different types)") from None


# --- rule kinds ------------------------------------------------------------------------------------


def _raw_records(ctx: _Context, rule: Rule) -> RuleResult:
    checks = [check_file(ctx.folder, rec) for _, rec in ctx.sheet.records_files()]
    fig = Figure(path="(every raw-records file)", value=len(checks), records=checks, n=len(checks))
    if not checks:
        return _result(
            rule, "not_measured", "the factsheet names no raw-records file (nothing was measured)", [fig]
        )
    bad = [c for c in checks if c.status == "mismatch"]
    missing = [c for c in checks if c.status != "verified" and c.status != "mismatch"]
    if bad:
        names = ", ".join(c.path for c in bad)
        return _result(
            rule,
            "fail",
            f"{len(bad)} of {len(checks)} raw-records files do not match their sha256: {names}",
            [fig],
        )
    if missing:
        names = ", ".join(c.path for c in missing)
        return _result(
            rule,
            "insufficient_evidence",
            f"{len(missing)} of {len(checks)} raw-records files are missing: {names}",
            [fig],
        )
    if ctx.support.problems:  # digests alone are not enough: the figures must be what the records give
        found = ctx.support.problems
        return _result(
            rule,
            "fail",
            f"{len(found)} figure(s) not supported by the raw records: {listing(found)}",
            [fig],
        )
    return _result(
        rule,
        "pass",
        f"all {len(checks)} raw-records files exist and match their sha256, and every figure they determine "
        "re-derives",
        [fig],
    )


def _documents(ctx: _Context, rule: Rule) -> RuleResult:
    figures, absent, unmeasured, estimated = [], [], [], []
    for path in rule.documents:
        r = resolve(ctx.sheet, path)
        fig = _plain_figure(r, "documents")
        if r.ok:
            fig.basis = _basis(r)
            if fig.basis == "estimated":
                estimated.append(path)
        figures.append(fig)
        if r.not_measured:
            unmeasured.append(r.not_measured)
        elif r.missing:
            absent.append(r.missing)
    if absent:
        return _result(rule, "fail", "not documented: " + "; ".join(absent), figures)
    if unmeasured:
        return _result(rule, "not_measured", "; ".join(dict.fromkeys(unmeasured)), figures)
    found = ctx.unsupported(*(resolve(ctx.sheet, p) for p in rule.documents))
    if found:
        return _result(rule, _unsupported_outcome(found), reasons(found), figures)
    note = f" ({', '.join(estimated)} estimated, not measured)" if estimated else ""
    return _result(rule, "pass", f"documented by {', '.join(rule.documents)}{note}", figures)


@dataclass
class _Claim:
    """A field rule's figure while it is judged: the figures the result shows (the figure first, then its
    threshold or denominator), the threshold, and how to get the figure's CI at another confidence."""

    rule: Rule
    fig: Figure
    figures: list[Figure]
    threshold: Any
    ci_fn: Callable[[float], Interval | None] | None

    def verdict(self, outcome: Outcome, reason: str) -> RuleResult:
        return _result(self.rule, outcome, reason, self.figures, threshold=self.threshold)


def _field_rule(ctx: _Context, rule: Rule) -> RuleResult:
    """A threshold (or `exists`) on one field, judged in the order the module docstring gives."""
    r = resolve(ctx.sheet, rule.field)
    if r.missing and r.not_measured is None and rule.op == "exists":
        return _result(rule, "fail", f"not recorded: {r.missing}", [_plain_figure(r)])
    if not r.ok:
        return _result(rule, "not_measured", _why(r), [_plain_figure(r)])
    claim = _claim(ctx, rule, r)
    if isinstance(claim, RuleResult):
        return claim
    return (
        _take_share(ctx, claim)
        or _evidence_verdict(claim)
        or _support_verdict(ctx, claim, r)
        or _comparison_verdict(claim)
    )


def _claim(ctx: _Context, rule: Rule, r: Resolved) -> _Claim | RuleResult:
    """The figure and its threshold: the rule's own, or one read from the factsheet (not measured: no claim)."""
    threshold, figures = rule.threshold, []
    if rule.threshold_field is not None:
        t = resolve(ctx.sheet, rule.threshold_field)
        figures.append(_plain_figure(t, "threshold"))
        if not t.ok:
            return _result(rule, "not_measured", f"threshold {_why(t)}", figures)
        threshold = t.value
    fig, ci_fn = _figure(ctx, r, rule, threshold)
    return _Claim(rule=rule, fig=fig, figures=[fig, *figures], threshold=threshold, ci_fn=ci_fn)


def _take_share(ctx: _Context, claim: _Claim) -> RuleResult | None:
    """With `of`, the figure becomes its share of the denominator (a count of a count gets a Wilson CI)."""
    rule, fig = claim.rule, claim.fig
    if rule.of is None:
        return None
    d = resolve(ctx.sheet, rule.of)
    claim.figures.append(_plain_figure(d, "denominator"))
    if not d.ok:
        return claim.verdict("not_measured", f"denominator {_why(d)}")
    num, den = fig.value, d.value
    if not isinstance(num, int | float) or not isinstance(den, int | float) or not den:
        return claim.verdict(
            "not_measured", f"{rule.field} / {rule.of} = {num!r} / {den!r}: no share to take"
        )
    fig.value, fig.n, fig.unit = num / den, int(den), "share"
    fig.note = f"{rule.field} / {rule.of} = {num} / {den}"
    claim.ci_fn = None
    if isinstance(num, int) and isinstance(den, int) and 0 <= num <= den:

        def ci_fn(conf: float, k: int = num, n: int = den) -> Interval:
            c = proportion_ci(k, n, conf)
            return Interval(lower=c.lower, upper=c.upper, confidence=conf, method=c.method)

        claim.ci_fn = ci_fn
    return None


def _evidence_verdict(claim: _Claim) -> RuleResult | None:
    """Evidence first: an estimate or altered records cannot pass, whatever the value."""
    rule, fig = claim.rule, claim.fig
    if fig.unit and rule.unit and fig.unit != rule.unit:
        raise PolicyError(
            f"rules.{rule.id}: threshold unit {rule.unit!r} but {rule.field} is in {fig.unit!r}"
        )
    if rule.evidence.measured and fig.basis == "estimated":
        return claim.verdict(
            "insufficient_evidence", f"{rule.field} is {fig.note}; the rule demands a measurement"
        )
    if rule.evidence.raw_records:
        if not fig.records:
            return claim.verdict("insufficient_evidence", f"no raw records stand behind {rule.field}")
        if any(c.status == "mismatch" for c in fig.records):
            return claim.verdict(
                "fail", "the raw records behind the figure do not match their sha256 (altered)"
            )
        if any(c.status != "verified" for c in fig.records):
            return claim.verdict("insufficient_evidence", "the raw records behind the figure are missing")
    return None


def _support_verdict(ctx: _Context, claim: _Claim, r: Resolved) -> RuleResult | None:
    """Then the figure itself (and its threshold or denominator taken from the sheet): re-derived from its
    records, or no decision rests on it."""
    rule = claim.rule
    found = ctx.unsupported(r, *(resolve(ctx.sheet, p) for p in (rule.threshold_field, rule.of) if p))
    return claim.verdict(_unsupported_outcome(found), reasons(found)) if found else None


def _comparison_verdict(claim: _Claim) -> RuleResult:
    """The comparison, on the confidence interval when the rule asks for one, then sample sufficiency."""
    rule, fig, threshold = claim.rule, claim.fig, claim.threshold
    value, unit = fig.value, f" {rule.unit or fig.unit or ''}".rstrip()
    if rule.op == "exists":
        return claim.verdict("pass", f"{rule.field} is recorded: {_fmt(value)}")
    if isinstance(value, float) and math.isnan(value):
        return claim.verdict("not_measured", f"{rule.field} is NaN")
    met = _compare(value, rule.op, threshold)
    stated = f"{rule.field} = {_fmt(value)}{unit}, required {rule.op} {_fmt(threshold)}{unit}"
    if rule.evidence.confidence is not None and rule.op in ("<=", "<", ">=", ">"):
        on_interval = _interval_verdict(claim, stated, unit)
        if isinstance(on_interval, RuleResult):
            return on_interval
        met, stated = True, on_interval
    if not met:
        return claim.verdict("fail", f"{stated}: does not hold" + _n_text(fig))
    return _sufficiency_verdict(claim, stated)


def _interval_verdict(claim: _Claim, stated: str, unit: str) -> RuleResult | str:
    """The whole interval on the passing side passes (returns the statement that says so); wholly on the
    failing side fails; across the threshold, or no interval, is insufficient evidence."""
    rule, fig, threshold, value = claim.rule, claim.fig, claim.threshold, claim.fig.value
    conf = rule.evidence.confidence
    stored = fig.ci if fig.ci is not None and math.isclose(fig.ci.confidence, conf) else None
    fig.ci = (claim.ci_fn(conf) if claim.ci_fn is not None else None) or stored
    ci = fig.ci
    if ci is None or ci.lower is None or ci.upper is None:
        why = (
            "no confidence interval is defined for this figure"
            if ci is None
            else "too few samples for a two-sided interval"
        )
        return claim.verdict(
            "insufficient_evidence", f"{stated} on the point value, but {why} at {conf:.0%} confidence"
        )
    passing_bound, failing_bound = (ci.upper, ci.lower) if rule.op in ("<=", "<") else (ci.lower, ci.upper)
    bounds = f"{ci.confidence:.0%} CI [{_fmt(ci.lower)}, {_fmt(ci.upper)}]{unit}"
    if _compare(passing_bound, rule.op, threshold):
        return f"{bounds} of {rule.field} lies wholly within {rule.op} {_fmt(threshold)}{unit} (point {_fmt(value)})"
    if not _compare(failing_bound, rule.op, threshold):
        return claim.verdict(
            "fail",
            f"{bounds} of {rule.field} lies wholly outside {rule.op} {_fmt(threshold)}{unit} (point {_fmt(value)})",
        )
    return claim.verdict(
        "insufficient_evidence",
        f"{bounds} straddles the threshold {_fmt(threshold)}{unit}: cannot decide (point {_fmt(value)})",
    )


def _sufficiency_verdict(claim: _Claim, stated: str) -> RuleResult:
    """A claim that holds passes only on the samples MLPerf early stopping demands, when the rule asks."""
    rule, fig = claim.rule, claim.fig
    suff = fig.sufficiency if rule.evidence.sufficient_samples else None
    if rule.evidence.sufficient_samples:
        if suff is None:
            return claim.verdict(
                "insufficient_evidence",
                f"{stated}: holds, but no sample-sufficiency rule applies to {rule.field} or its raw records are unavailable",
            )
        if not suff.sufficient:
            need = "more than any n can give" if suff.n_required is None else str(suff.n_required)
            return claim.verdict(
                "insufficient_evidence",
                f"{stated}: holds on the point value, but rests on {suff.n} samples with {suff.violations} above the threshold: "
                f"MLPerf early stopping needs {need} for the claim at {suff.confidence:.0%} confidence",
            )
    backing = f"; {suff.n} samples, {suff.n_required} needed" if suff is not None and suff.n_required else ""
    return claim.verdict("pass", f"{stated}: holds" + _n_text(fig) + backing)


def _unsupported_outcome(found: list[Unsupported]) -> Outcome:
    """A figure the records contradict fails; one whose records are absent has no evidence either way."""
    return "insufficient_evidence" if all(u.missing for u in found) else "fail"


def _n_text(fig: Figure) -> str:
    return f" (n = {fig.n})" if fig.n is not None else ""


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return repr(v) if isinstance(v, str) else str(v)


# --- figures and what they rest on -------------------------------------------------------------------


def _plain_figure(r: Resolved, role: str = "figure") -> Figure:
    if r.not_measured:
        return Figure(path=r.path, role=role, status="not_measured", note=r.not_measured)
    if r.missing:
        return Figure(path=r.path, role=role, status="missing", note=r.missing)
    value = r.value if isinstance(r.value, int | float | str | bool) else None
    note = None if value is not None else f"a {type(r.value).__name__} value"
    return Figure(path=r.path, role=role, value=value, note=note)


def _basis(r: Resolved) -> str:
    if r.path.startswith(("identity", "provenance")):
        return "declared"
    for _, obj in r.trail:
        if getattr(obj, "basis", None) == "estimated" or getattr(obj, "source", None) == "simulator":
            return "estimated"
    return "measured"


def _figure(ctx: _Context, r: Resolved, rule: Rule, threshold: Any) -> tuple[Figure, Any]:
    """The figure with its unit, n, stored CI and sample sufficiency where the factsheet defines them, and
    a function giving its CI at another confidence (from raw samples where they exist). A percentile
    claim's sufficiency is recomputed from the raw samples against the rule's own threshold."""
    fig = _plain_figure(r)
    fig.basis = _basis(r)
    if fig.basis == "estimated":
        fig.note = "an estimate or simulator prediction, not a measurement"
    names = [p.rsplit(".", 1)[-1].split("[", 1)[0] for p, _ in r.trail]
    objs = [o for _, o in r.trail]
    entry = next((o for o in objs if isinstance(o, LoadPointEntry)), None)
    run = next((o for o in objs if isinstance(o, CapacityPoint)), None)
    if entry is not None:
        point = ctx.points.get(entry.result.label)
    else:  # a capacity run's own records (page 1's run, `paths.page_one_path`), not the whole search's
        point = capacity_run_records(ctx.sheet, ctx.folder, run) if run is not None else None
    fig.records = [point.check()] if point is not None else _records_near(ctx, r)
    metrics = next((o for o in reversed(objs) if isinstance(o, LoadMetrics)), None)
    dist = next((o for o in reversed(objs) if isinstance(o, Distribution)), None)
    if dist is not None:
        fig.unit, fig.n = dist.unit, dist.n
    metric, q = _percentile_of(names, metrics)
    if metric is not None and metrics is not None:
        return fig, _percentile_evidence(fig, metrics, metric, q, point, rule, threshold)
    if metrics is not None and names[-1] in ("goodput", "slo_attainment") and metrics.goodput_ci is not None:
        return fig, _attainment_evidence(fig, metrics, names[-1])
    rates = next((o for o in objs if isinstance(o, PassRates)), None)
    if rates is not None and isinstance(fig.value, float):
        fig.n, fig.unit = rates.n_tasks, "fraction of tasks"
        if rates.n_samples_per_task == 1:

            def ci_fn(conf: float, v: float = fig.value, n: int = rates.n_tasks) -> Interval:
                c = proportion_ci(round(v * n), n, conf)
                return Interval(
                    lower=c.lower, upper=c.upper, confidence=conf, method=c.method + ", over tasks"
                )

            fig.ci = ci_fn(CI_CONFIDENCE)
            return fig, ci_fn
        return fig, None
    cap = objs[-2] if len(objs) >= 2 else None
    if names[-1] == "capacity" and isinstance(cap, CapacityResult):
        n = next((getattr(p.metrics, cap.slo.p99_metric).n for p in cap.points if p.value == cap.capacity), 0)
        fig.n = n
        fig.sufficiency = SampleSufficiency(
            percentile=99.0,
            n=n,
            threshold_ms=cap.slo.thresholds().get(cap.slo.p99_metric),
            violations=0,
            n_required=min_samples(99.0, 0, CLAIM_CONFIDENCE),
            confidence=CLAIM_CONFIDENCE,
            sufficient=not cap.insufficient_samples,
            rule="the capacity search's own verdict on its capacity point (load.capacity.result.insufficient_samples)",
        )
        return fig, None
    quantity = next((o for o in reversed(objs) if isinstance(o, Quantity)), None)
    if quantity is not None:
        fig.unit, fig.n = quantity.unit, quantity.n
    est = next((o for o in reversed(objs) if isinstance(o, Estimate)), None)
    if est is not None:
        fig.unit, fig.n = est.unit, est.n
        fig.ci = Interval(
            lower=est.ci_low, upper=est.ci_high, confidence=0.95, method="± 1.96 SE, as the tuner states it"
        )
    return fig, None


def _percentile_of(names: list[str], metrics: LoadMetrics | None) -> tuple[str | None, float | None]:
    """`<metric>.percentiles.pNN` or `p99_check.p99_ms` under a LoadMetrics: (metric, percentile)."""
    if metrics is None:
        return None, None
    if len(names) >= 3 and names[-2] == "percentiles" and names[-3] in LATENCY_METRICS:
        m = _PERCENTILE.match(names[-1])
        if m and 0 < float(m.group(1)) < 100:
            return names[-3], float(m.group(1))
    if names[-2:] == ["p99_check", "p99_ms"] and metrics.p99_check is not None:
        return metrics.p99_check.metric, 99.0
    return None, None


def _percentile_evidence(fig, metrics, metric, q, point, rule, threshold):
    fig.unit, fig.n = "ms", getattr(metrics, metric).n
    samples = point.samples(metric) if point is not None else None
    stored = metrics.percentile_ci.get(f"{metric}.p{q:g}")
    if stored is not None:
        fig.ci = Interval(
            lower=stored.lower, upper=stored.upper, confidence=stored.confidence, method=stored.method
        )
    if samples is not None:
        claim = (
            isinstance(threshold, int | float) and not isinstance(threshold, bool) and rule.op in ("<=", "<")
        )
        fig.sufficiency = sample_sufficiency(
            samples, percentile=q, threshold=float(threshold) if claim else None, confidence=CLAIM_CONFIDENCE
        )

    def ci_fn(conf: float) -> Interval | None:
        if samples is None:
            return None
        c = quantile_ci(samples, q, conf)
        return Interval(lower=c.lower, upper=c.upper, confidence=conf, method=c.method)

    return ci_fn


def _attainment_evidence(fig, metrics, name):
    fig.n = metrics.measured
    scale = metrics.measured / metrics.duration_s if name == "goodput" and metrics.duration_s else 1.0
    if name == "goodput":
        fig.unit = "req/s"

    def ci_fn(conf: float) -> Interval:
        c = proportion_ci(metrics.good, metrics.measured, conf)
        lo = None if c.lower is None else c.lower * scale
        hi = None if c.upper is None else c.upper * scale
        method = c.method + (" of good/measured, times measured/window" if name == "goodput" else "")
        return Interval(lower=lo, upper=hi, confidence=conf, method=method)

    fig.ci = ci_fn(CI_CONFIDENCE)
    return ci_fn


def _records_near(ctx: _Context, r: Resolved) -> list[RecordsCheck]:
    """The raw records of the section a figure lies in (accuracy, capacity), when not a load point's."""
    head = r.path.split(".", 1)[0]
    prefix = {"accuracy": "accuracy", "load": "capacity"}.get(head)
    if prefix is None:
        return []
    return [check_file(ctx.folder, rec) for what, rec in ctx.sheet.records_files() if what.startswith(prefix)]
