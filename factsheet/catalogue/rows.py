"""One build as the catalogue shows it: identity, date, tool version, the five headline figures with their
intervals, the compliance verdict, and whether its figures re-derive from its raw records. Made afresh from
the factsheet on every run (the site's manifest records it, and is never read back as input). The load
figures are page 1's (`factsheet.headline.select.informative_run`: the run at the capacity when there is one)."""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import Field

from factsheet.headline.select import informative_run
from factsheet.schema import Factsheet, headline_index
from probes.core.measurement import Model, NotMeasured
from probes.load.stats import proportion_ci

FigureKey = Literal["capacity", "e2el_p99", "goodput", "pass_at_1", "energy_per_1000"]
FIGURE_KEYS: tuple[FigureKey, ...] = ("capacity", "e2el_p99", "goodput", "pass_at_1", "energy_per_1000")
FIGURE_TITLES: dict[FigureKey, str] = {
    "capacity": "Capacity at SLO",
    "e2el_p99": "p99 E2EL",
    "goodput": "Goodput",
    "pass_at_1": "pass@1",
    "energy_per_1000": "Energy per 1,000 requests",
}
# The figure `factsheet diff` compares for each trend (None: diff does not compare that figure).
DIFF_FIGURE: dict[FigureKey, str | None] = {
    "capacity": None,
    "e2el_p99": "e2el_ms.p99",
    "goodput": "goodput",
    "pass_at_1": "pass@1",
    "energy_per_1000": None,
}


class HeadlineFigure(Model):
    """A figure as the factsheet states it, or why there is none."""

    value: float | None = None
    lower: float | None = None
    upper: float | None = None
    unit: str = ""
    interval: str = Field("", description="what the interval is (e.g. '95 % CI', 'probe range')")
    n: int | None = None
    scope: str = Field("", description="where it was measured: a load point label, 'accuracy'")
    missing: str | None = Field(None, description="why there is no value (the factsheet's reason)")


def deployment_id(name: str, model: str, target_kind: str) -> str:
    """The deployment's identity: the full sha256 of its key as a JSON array (unambiguous whatever the names
    hold: "a · b" + "c" and "a" + "b · c" are two deployments), also its page's file name."""
    key = json.dumps([name, model, target_kind], ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(key.encode()).hexdigest()


class BuildRow(Model):
    sha256: str = Field(description="hex digest of the factsheet JSON's bytes: the build's identity")
    deployment: str = Field(description="name · model · target kind, as shown (not the identity)")
    deployment_id: str = Field(
        description="sha256 of [name, model, target kind]: the builds a trend runs over"
    )
    rederives: bool = Field(
        description="every figure re-derives from the raw records, every records file matches its digest, "
        "and the compliance summary holds when its policies are re-run (what `factsheet validate` checks)"
    )
    unsupported: str | None = Field(None, description="why it does not re-derive (the first discrepancies)")
    name: str
    model: str
    model_version: str | None
    target: str
    date: str = Field(description="the build's finish, ISO 8601 UTC")
    tool_version: str
    schema_version: str
    figures: dict[FigureKey, HeadlineFigure]
    compliance: str = Field(description="pass, fail, or 'no policy run'")


def _nm(reason: str) -> HeadlineFigure:
    return HeadlineFigure(missing=reason)


def _target(sheet: Factsheet) -> str:
    system = sheet.system
    if system.target_kind == "endpoint":
        return f"endpoint {system.base_url}" if system.base_url else "endpoint"
    engine = system.engine
    if isinstance(engine, NotMeasured):
        return "vllm"
    return f"{engine.name} {engine.version or ''}".strip()


def build_row(
    sheet: Factsheet, sha256: str, compliance_verdict: str | None, unsupported: str | None
) -> BuildRow:
    """`compliance_verdict`: a report's verdict found beside the factsheet, used when the factsheet carries
    no gate of its own (a `factsheet check` run after the build). `unsupported`: why the sheet does not
    re-derive, None when it does."""
    c = sheet.compliance
    verdict = c.verdict if not isinstance(c, NotMeasured) else compliance_verdict or "no policy run"
    return BuildRow(
        sha256=sha256,
        deployment=f"{sheet.name} · {sheet.identity.name} · {sheet.system.target_kind}",
        deployment_id=deployment_id(sheet.name, sheet.identity.name, sheet.system.target_kind),
        rederives=unsupported is None,
        unsupported=unsupported,
        name=sheet.name,
        model=sheet.identity.name,
        model_version=sheet.identity.version,
        target=_target(sheet),
        date=sheet.provenance.finished_at,
        tool_version=sheet.provenance.tool_version,
        schema_version=sheet.schema_version,
        figures={
            "capacity": _capacity(sheet),
            **_headline_point(sheet),
            "pass_at_1": _pass_at_1(sheet),
            "energy_per_1000": _energy(sheet),
        },
        compliance=verdict,
    )


def _capacity(sheet: Factsheet) -> HeadlineFigure:
    if isinstance(sheet.load, NotMeasured):
        return _nm(sheet.load.reason)
    if isinstance(sheet.load.capacity, NotMeasured):
        return _nm(sheet.load.capacity.reason)
    r = sheet.load.capacity.result
    if r.capacity is None:
        return _nm(f"no probed {r.knob} passed ({r.stop_reason})")
    low, high = r.range
    return HeadlineFigure(
        value=r.capacity,
        lower=low,
        upper=high,
        unit="req/s" if r.knob == "rate" else "concurrent users",
        interval="range the probes cannot tell apart at 95 % (≥ lower, < upper)",
        scope=f"capacity search over {r.knob}",
    )


def _headline_point(sheet: Factsheet) -> dict[FigureKey, HeadlineFigure]:
    """p99 E2EL and goodput of the run page 1 states (the same function picks it)."""
    run = informative_run(sheet.load)
    if run is None:
        reason = sheet.load.reason if isinstance(sheet.load, NotMeasured) else "no load point"
        return {"e2el_p99": _nm(reason), "goodput": _nm(reason)}
    m = run.metrics
    # diff compares load points by label; the capacity confirmation is no load point (no diff row of its own)
    scope = (
        run.where if run.confirmation else sheet.load.points[headline_index(sheet.load.points)].result.label
    )
    p99 = m.e2el_ms.p(99)
    ci = m.percentile_ci.get("e2el_ms.p99")
    e2el = (
        _nm("no completed request")
        if p99 is None
        else HeadlineFigure(
            value=p99,
            lower=ci.lower if ci else None,
            upper=ci.upper if ci else None,
            unit="ms",
            interval=f"{ci.confidence:.0%} CI" if ci and ci.lower is not None else "",
            n=m.e2el_ms.n,
            scope=scope,
        )
    )
    if m.goodput is None:
        goodput = _nm("the spec sets no SLO threshold")
    else:
        g = m.goodput_ci
        bounded = g is not None and g.lower is not None and g.upper is not None
        goodput = HeadlineFigure(
            value=m.goodput,
            lower=g.lower if bounded else None,
            upper=g.upper if bounded else None,
            unit="req/s",
            interval=f"{g.attainment.confidence:.0%} CI" if bounded else "",
            n=m.measured,
            scope=scope,
        )
    return {"e2el_p99": e2el, "goodput": goodput}


def _pass_at_1(sheet: Factsheet) -> HeadlineFigure:
    """pass@1 on the strictest tests that ran, with the Clopper–Pearson interval over tasks the factsheet's
    At a glance states (one sample per task)."""
    if isinstance(sheet.accuracy, NotMeasured):
        return _nm(sheet.accuracy.reason)
    rates = sheet.accuracy.result.pass_rates
    v = (rates.plus or rates.base).get("pass@1")
    if v is None:
        return _nm("pass@1 not reported")
    n = rates.n_tasks
    lower = upper = None
    if rates.n_samples_per_task == 1 and n:
        ci = proportion_ci(round(v * n), n)
        lower, upper = ci.lower, ci.upper
    return HeadlineFigure(
        value=v,
        lower=lower,
        upper=upper,
        unit="fraction of tasks",
        interval="95 % CI (Clopper–Pearson over tasks)" if lower is not None else "",
        n=n,
        scope=f"{sheet.accuracy.result.benchmark}, {'base+plus' if rates.plus else 'base'} tests",
    )


def _energy(sheet: Factsheet) -> HeadlineFigure:
    en = sheet.energy
    for x in (en, getattr(en, "energy", None)):
        if isinstance(x, NotMeasured):
            return _nm(x.reason)
    total = en.energy.total
    if isinstance(total, NotMeasured):
        return _nm(total.reason)
    q = total.gross.wh_per_1000_requests
    if isinstance(q, NotMeasured):
        return _nm(q.reason)
    # One energy window: the factsheet states no interval for it, and none is invented here.
    return HeadlineFigure(value=q.value, unit=q.unit, n=q.n, scope=f"gross, {total.boundary}")
