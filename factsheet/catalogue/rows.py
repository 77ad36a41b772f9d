"""One build as the catalogue shows it: identity, date, tool version, the five headline figures with their
intervals, the compliance verdict, and whether its figures re-derive from its raw records. Made afresh from
the factsheet on every run (the site's manifest records it, and is never read back as input). The figures
are page 1's, taken from the headline (`factsheet.document.headline`: the sheet's own section, recomputed by the
re-derivation, or computed from an older sheet), so the index says what the PDF says."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Literal

from pydantic import Field

from factsheet.document.headline.figures import stated_or_computed
from factsheet.document.headline_model import VERDICT_WORDS
from factsheet.document.schema import Factsheet
from probes.core.measurement import Bounded, Model, NotMeasured

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
    "capacity": "capacity_at_slo",
    "e2el_p99": "e2el_ms.p99",
    "goodput": "goodput",
    "pass_at_1": "pass@1",
    "energy_per_1000": None,
}


class HeadlineFigure(Bounded, Model):
    """A figure as the factsheet states it, or why there is none."""

    value: float | None = None
    lower: float | None = None
    upper: float | None = None
    unit: str = ""
    interval: str = Field("", description="what the interval is (e.g. '95 % CI', 'probe range')")
    n: int | None = None
    scope: str = Field("", description="where it was measured: a load point label, 'accuracy'")
    missing: str | None = Field(None, description="why there is no value (the factsheet's reason)")
    lower_bound: bool = Field(False, description="the value is a lower bound (≥ value), as page 1 states it")
    verdict: str = Field("", description="what its samples support, in the headline's words")


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
        figures=_figures(sheet),
        compliance=verdict,
    )


# Each figure of the row: the headline figure it is (factsheet/headline, the one home of page 1's figures).
HEADLINE_IDS: dict[FigureKey, str] = {
    "capacity": "capacity_at_slo",
    "e2el_p99": "e2el_ms.p99",
    "goodput": "goodput",
    "pass_at_1": "pass_at_1",
    "energy_per_1000": "energy_wh_per_1000_requests",
}
_POINT = re.compile(r"^/load/points/(\d+)(/|$)")


def _figures(sheet: Factsheet) -> dict[FigureKey, HeadlineFigure]:
    """The row's figures as page 1 states them: the sheet's headline section (which the re-derivation has
    recomputed), or for an older sheet the one computed from it."""
    head = stated_or_computed(sheet)
    out: dict[FigureKey, HeadlineFigure] = {}
    for key, id in HEADLINE_IDS.items():
        f = head.figure(id)
        if f is None:
            out[key] = _nm("not on page 1 of this factsheet")
        elif f.value is None:
            out[key] = _nm(f.note or VERDICT_WORDS[f.verdict])
        else:
            i = f.interval
            out[key] = HeadlineFigure(
                value=f.value,
                lower=i.lower if i else None,
                upper=i.upper if i else None,
                unit=f.unit,
                interval=i.method if i else "",
                n=f.n,
                scope=_scope(sheet, key, f.source),
                lower_bound=f.lower_bound,
                verdict=VERDICT_WORDS[f.verdict],
            )
    return out


def _scope(sheet: Factsheet, key: FigureKey, source: str) -> str:
    """Where the figure was measured, named as `factsheet diff` names its row (so a trend point is marked by
    the diff row of the same figure): a load point's label, the capacity search (and its confirmation), or
    'accuracy'."""
    if key == "pass_at_1":
        return "accuracy"
    if isinstance(sheet.load, NotMeasured):
        return ""
    search = f"capacity ({sheet.load.profile()})"
    if key == "capacity":
        return search
    m = _POINT.match(source)
    if m and int(m.group(1)) < len(sheet.load.points):
        return sheet.load.points[int(m.group(1))].result.label
    cap = sheet.load.capacity
    if (
        source.startswith("/load/capacity")
        and not isinstance(cap, NotMeasured)
        and cap.result.capacity is not None
    ):
        return f"{search} confirmation, {cap.result.knob} {cap.result.capacity:g}"
    return source
