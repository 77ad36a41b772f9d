"""The reviewer's summary, the document's first two pages: what was measured, on what, for which uses; the
headline figures in plain words with their verdicts; the policy verdict; what was not measured and why; known
limitations; whether the document is signed. Each line links to its evidence and says where it comes from.

Every value is read from the factsheet (the headline's figures, as `factsheet.document.headline` chose and
`validate` recomputes them): this module only words them. Where a line comes from is one of `MARKS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from factsheet.document.conformance import ConformanceSection
from factsheet.document.governance import Governance
from factsheet.document.headline.figures import stated_or_computed
from factsheet.document.headline_model import VERDICT_WORDS, Figure, Headline
from factsheet.document.schema import CapacitySection, Factsheet, LoadSection
from factsheet.render.glance import Status
from probes.core.measurement import NotMeasured
from probes.load.metrics import LATENCY_LABELS

Mark = Literal["declared", "measured", "rederived", "not_measured"]
# The legend on page 1, in this order: a letter on every line, and what it vouches for.
MARKS: dict[Mark, tuple[str, str]] = {
    "declared": ("D", "declared: the author's words in the build spec; this tool does not check them"),
    "measured": (
        "M",
        "measured or recorded by this tool during the build, with its sample size and interval",
    ),
    "rederived": (
        "R",
        "re-derived: computed from the measured runs (headline choice, rebuild interval, verdicts); "
        "`factsheet validate` recomputes it from the raw records",
    ),
    "not_measured": ("N", "not measured: the reason is stated; nothing is defaulted"),
}


@dataclass(frozen=True)
class Line:
    label: str
    text: str
    mark: Mark
    href: str  # the evidence: an anchor in this document
    status: Status = "plain"


@dataclass(frozen=True)
class Summary:
    system: list[Line]
    uses: list[Line]
    figures: list[Line]
    policy: Line
    not_measured: list[Line]
    limitations: list[Line]
    provenance: list[Line]

    def lines(self) -> list[Line]:
        return [*self.system, *self.uses, *self.figures, self.policy, *self.not_measured, *self.limitations,
                *self.provenance]  # fmt: skip


def summary(
    sheet: Factsheet,
    signing_key_id: str | None,
    json_sha256: str | None,
    weak_points: int = 0,
    planned_at: str | None = None,
) -> Summary:
    """The summary of `sheet`; `weak_points`: load points whose p99 figures rest on too few samples (as the
    load section counts them); `planned_at`: when the build signed its gate's policies, before measuring."""
    h = stated_or_computed(sheet)
    return Summary(
        system=_system(sheet),
        uses=_uses(sheet),
        figures=_figures(sheet, h),
        policy=_policy(sheet),
        not_measured=_not_measured(sheet, h),
        limitations=_limitations(sheet, h, weak_points),
        provenance=_provenance(sheet, signing_key_id, json_sha256, planned_at),
    )


def _declared(label: str, value: object, href: str, missing: str = "not stated in the build spec") -> Line:
    if value is None or value == "" or value == []:
        return Line(label, missing, "not_measured", href, "nm")
    text = "; ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return Line(label, text, "declared", href)


def _conformance(conf: ConformanceSection) -> list[Line]:
    """The engine found from the server's answers, the model id sent, and the preflight's deviations."""
    e = conf.engine
    found = f"found from {'; '.join(e.detected_from)}" if e.detected_from else "no engine named itself"
    engine = Line("Engine", f"{e.label} {e.version or '(no version stated)'} ({found}); model id sent "
                  f"{e.served_model}", "measured", "#conformance")  # fmt: skip
    deviations = conf.deviations()
    if not deviations:
        return [engine, Line("Conformance", "every preflight check passed or was not applicable", "measured",
                             "#conformance", "ok")]  # fmt: skip
    words = "; ".join(c.detail for c in deviations)
    return [
        engine,
        Line("Conformance", f"measured with deviations: {words}", "measured", "#conformance", "bad"),
    ]


def _measured(sheet: Factsheet) -> Line:
    """What the build measured, in one line: the load sweep, each capacity search's workload, and the other
    sections that ran (what did not is listed under "Not measured, and why")."""
    parts, href = [], None
    load = sheet.load
    if isinstance(load, LoadSection) and load.points:
        labels = ", ".join(p.result.label for p in load.points)
        parts.append(f"latency and throughput at {len(load.points)} load point(s) ({labels})")
        searched = [(load.profile(), load.capacity)] + [
            (c.workload.profile, c.capacity) for c in load.compared_workloads
        ]
        profiles = [profile for profile, cap in searched if not isinstance(cap, NotMeasured)]
        if profiles:
            parts.append(f"capacity at SLO for {len(profiles)} workload(s) ({', '.join(profiles)})")
        href = "#load"
    if not isinstance(sheet.accuracy, NotMeasured):
        r = sheet.accuracy.result
        parts.append(f"accuracy ({r.benchmark}, {r.pass_rates.n_tasks} tasks)")
        href = href or "#accuracy"
    energy = sheet.energy
    if not isinstance(energy, NotMeasured) and not isinstance(energy.energy, NotMeasured):
        if not isinstance(energy.energy.total, NotMeasured):  # a window read but no component: not measured
            parts.append("energy over the load window")
        href = href or "#energy"
    if not isinstance(sheet.tuning, NotMeasured):
        parts.append(f"tuning ({len(sheet.tuning.trace)} evaluations)")
        href = href or "#tuning"
    if not isinstance(sheet.predictor, NotMeasured):
        parts.append(f"a performance predictor ({sheet.predictor.campaign.configurations} configurations)")
        href = href or "#predictor"
    if not parts:
        return Line(
            "Measured", "nothing: every section says why under Not measured", "not_measured", "#summary", "nm"
        )
    return Line("Measured", "; ".join(parts), "measured", href)


def _system(sheet: Factsheet) -> list[Line]:
    ident, system = sheet.identity, sheet.system
    model = " ".join(filter(None, [ident.name, ident.version]))
    extra = ", ".join(filter(None, [ident.architecture, f"{ident.parameters:,} parameters" if ident.parameters
                                    else None, ident.license and f"licence {ident.license}"]))  # fmt: skip
    lines = [
        _measured(sheet),
        Line("Model", f"{model}{f' ({extra})' if extra else ''}", "declared", "#identity"),
    ]
    gov = sheet.governance
    if gov is not None:
        derived = "; ".join(filter(None, [gov.base_model and f"base model {gov.base_model}",
                                          gov.adapters and f"adapters {', '.join(gov.adapters)}"]))  # fmt: skip
        if derived:
            lines.append(Line("Depends on", derived, "declared", "#governance"))
        dates = "; ".join(filter(None, [gov.release_date and f"released {gov.release_date}",
                                        gov.eu_release_date and f"on the EU market {gov.eu_release_date}"]))  # fmt: skip
        if dates:
            lines.append(Line("Release", dates, "declared", "#governance"))
        if gov.modalities:
            lines.append(Line("Modalities", modalities_words(gov), "declared", "#governance"))
    served = ident.served_model
    if served is None or not served.digests:
        lines.append(Line("Weights digest", "not recorded: the tool took no digest of the weights served (an "
                          "external endpoint's weights are not visible to it)", "not_measured", "#identity", "nm"))  # fmt: skip
    else:
        files = sorted(served.digests.items())
        name, digest = files[0]
        more = f" and {len(files) - 1} more file(s)" if len(files) > 1 else ""
        lines.append(Line("Weights digest", f"{name} {digest}{more} (sha256 of the files the engine loaded)",
                          "measured", "#identity"))  # fmt: skip
    engine, conf = system.engine, sheet.conformance
    if conf is not None:
        lines += _conformance(conf)
    elif isinstance(engine, NotMeasured):
        lines.append(Line("Engine", f"{system.target_kind}: not inspected — {engine.reason}", "not_measured",
                          "#system", "nm"))  # fmt: skip
    else:
        lines.append(Line("Engine", f"{engine.name} {engine.version or '(version not reported)'}", "measured",
                          "#system"))  # fmt: skip
    host = system.host
    gpus = host.gpus if not isinstance(host.gpus, NotMeasured) else []
    memory = f", {host.memory_gib:.0f} GiB memory" if host.memory_gib else ""
    hardware = f"{host.cpu_model or 'CPU model not reported'} ({host.cpu_affinity} of {host.cpu_count} CPUs usable{memory})"
    hardware += f"; GPUs: {', '.join(gpus)}" if gpus else "; no GPU"
    lines.append(Line("Hardware", f"{hardware}; {host.os}", "measured", "#system"))
    return lines


def _uses(sheet: Factsheet) -> list[Line]:
    ident, gov = sheet.identity, sheet.governance
    lines = [
        _declared("Intended use", ident.intended_use, "#identity"),
        _declared("Out of scope", ident.out_of_scope, "#identity"),
    ]
    if gov is not None and gov.acceptable_use_policy:
        lines.append(Line("Acceptable use", gov.acceptable_use_policy, "declared", "#governance"))
    if gov is not None and gov.distribution_channels:
        lines.append(Line("Distributed via", "; ".join(gov.distribution_channels), "declared", "#governance"))
    return lines


def modalities_words(gov: Governance) -> str:
    """Each declared modality with its largest size: 'text input up to 2,048 tokens; text output'."""
    return "; ".join(
        f"{m.modality} {m.direction}"
        + (f" up to {m.max_size:,} {m.unit or ''}".rstrip() if m.max_size else "")
        for m in gov.modalities
    )


def _sections(sheet: Factsheet) -> dict[str, CapacitySection | NotMeasured]:
    if isinstance(sheet.load, NotMeasured):
        return {}
    out = {"capacity_at_slo": sheet.load.capacity}
    out |= {f"capacity_at_slo.{c.workload.profile}": c.capacity for c in sheet.load.compared_workloads}
    return out


def _g(v: float | None) -> str:
    return "—" if v is None else f"{v:g}"


def _ms(v: float | None) -> str:
    return "—" if v is None else f"{v:,.0f} ms" if v >= 100 else f"{v:,.1f} ms"


def _figures(sheet: Factsheet, h: Headline) -> list[Line]:
    sections = _sections(sheet)
    lines = [_capacity(f, sections.get(f.id)) for f in h.capacities()]
    for id in ("e2el_ms.p99", "ttft_ms.p99", "tpot_ms.p99"):
        f = h.figure(id)
        if f is not None and (id == "e2el_ms.p99" or f.rebuild is not None):
            lines.append(_p99(f))
    for id, line in (
        ("goodput", _goodput),
        ("pass_at_1", _pass_at_1),
        ("energy_wh_per_1000_requests", _energy),
    ):
        f = h.figure(id)
        if f is not None:
            lines.append(line(f, h))
    gov = sheet.governance
    for t in gov.decision_thresholds if gov is not None else []:
        f = h.figure(t.figure)
        name = f.label if f is not None else t.figure
        lines.append(Line(f"{name}: decided at", f"{t.threshold} (the author's decision threshold; policies, not "
                          "this summary, judge it)", "declared", "#governance"))  # fmt: skip
    return lines


def _not_measured_line(f: Figure, href: str) -> Line:
    return Line(f.label, f"not measured — {f.note}", "not_measured", href, "nm")


def _capacity(f: Figure, cap: CapacitySection | NotMeasured | None) -> Line:
    href = "#capacity" if f.profile is None or "." not in f.id else f"#capacity-{f.profile}"
    label = f"Capacity at SLO{f', {f.profile}' if f.profile and '.' in f.id else ''}"
    if f.verdict == "not_measured" or not isinstance(cap, CapacitySection):
        return _not_measured_line(f, href)
    r = cap.result
    metric = LATENCY_LABELS.get(r.slo.p99_metric, r.slo.p99_metric)
    threshold = r.slo.thresholds().get(r.slo.p99_metric)
    slo = f"p99 {metric} ≤ {_ms(threshold)}"
    if f.value is None:
        return Line(label, f"no {r.knob} probed meets {slo}: {f.note}", "measured", href, "bad")
    unit = f.unit
    if f.verdict == "not_confirmed":
        return Line(label, f.note, "measured", href, "bad")  # the note opens with "not confirmed:"
    holds = f"holds {'at least ' if f.lower_bound else ''}{f.value:g} {unit} at {slo}"
    if f.interval is not None and not f.lower_bound:
        holds += f" (the search brackets it within [{_g(f.interval.lower)}, {_g(f.interval.upper)}))"
    words = [holds, f"{VERDICT_WORDS[f.verdict]} for its p99 ({f.run})"]
    rb = f.rebuild
    if rb is not None and rb.interval is not None and threshold is not None:
        within = rb.interval.upper is not None and rb.interval.upper <= threshold
        words.append(
            f"a rebuild's p99 {metric} stays within {_ms(rb.interval.lower)}–{_ms(rb.interval.upper)} "
            f"({'inside' if within else 'crossing'} the SLO; {rb.passed} of {rb.k} repeats passed)"
        )
    elif rb is not None:
        words.append(f"{rb.passed} of {rb.k} repeats passed (too few values for a rebuild interval)")
    else:
        words.append("not repeated: whether a rebuild holds it is not measured")
    bad = f.verdict in ("insufficient", "conclusive_fail")
    return Line(label, "; ".join(words), "measured", href, "bad" if bad else "ok")


def _p99(f: Figure) -> Line:
    href = "#load"
    if f.value is None:
        return _not_measured_line(f, href)
    ci = f.interval
    words = [
        f"{_ms(f.value)}"
        + (f" (95 % CI [{_ms(ci.lower)}, {_ms(ci.upper)}], n {f.n})" if ci else f" (n {f.n})")
    ]
    if f.threshold_ms is not None:
        words.append(f"{VERDICT_WORDS[f.verdict]} against the {_ms(f.threshold_ms)} SLO")
    else:
        words.append(VERDICT_WORDS[f.verdict])
    if f.rebuild is not None and f.rebuild.interval is not None:
        words.append(
            f"a rebuild stays within {_ms(f.rebuild.interval.lower)}–{_ms(f.rebuild.interval.upper)}"
        )
    bad = f.verdict in ("insufficient", "conclusive_fail")
    return Line(f.label, "; ".join(words), "measured", href, "bad" if bad else "plain")


def _goodput(f: Figure, h: Headline) -> Line:
    if f.value is None:
        return _not_measured_line(f, "#load")
    att = h.figure("slo_attainment")
    ci = f.interval
    text = f"{f.value:,.2f} req/s" + (f" (95 % CI {ci.lower:,.2f}–{ci.upper:,.2f})" if ci else "")
    if att is not None and att.value is not None:
        text += f"; {att.value:.1%} of requests met the SLO"
    if f.rebuild is not None and f.rebuild.interval is not None:
        text += (
            f"; a rebuild stays within {f.rebuild.interval.lower:,.2f}–{f.rebuild.interval.upper:,.2f} req/s"
        )
    return Line(f.label, text, "measured", "#load")


def _pass_at_1(f: Figure, h: Headline) -> Line:
    if f.value is None:
        return _not_measured_line(f, "#accuracy")
    ci = f.interval
    text = f"{f.value:.1%} over {f.n} tasks" + (f" (95 % CI {ci.lower:.1%}–{ci.upper:.1%})" if ci else "")
    return Line(f.label, f"{text}; {f.run}", "measured", "#accuracy")


def _energy(f: Figure, h: Headline) -> Line:
    if f.value is None:
        return _not_measured_line(f, "#energy")
    return Line(f.label, f"{f.value:.4g} {f.unit} ({f.run}; n {f.n} requests)", "measured", "#energy")


def _policy(sheet: Factsheet) -> Line:
    c = sheet.compliance
    if isinstance(c, NotMeasured):
        return Line("Policy", f"no policy was run — {c.reason}", "not_measured", "#compliance", "nm")
    names = ", ".join(f"{p.id} {p.version}" for p in c.policies)
    counts = ", ".join(f"{n} {o.replace('_', ' ')}" for o, n in c.counts.items() if n)
    verdict = "passed" if c.verdict == "pass" else f"did not pass ({c.verdict})"
    return Line(
        "Policy",
        f"the build's gate {verdict}: {names} ({counts}); stated by the build, re-run by `factsheet validate`",
        "rederived",
        "#compliance",
        "ok" if c.verdict == "pass" else "bad",
    )


_SECTIONS = (
    ("load", "Load and latency", "#load"),
    ("accuracy", "Accuracy", "#accuracy"),
    ("energy", "Energy and carbon", "#energy"),
    ("tuning", "Tuning", "#tuning"),
    ("predictor", "Performance predictor", "#predictor"),
)


def _not_measured(sheet: Factsheet, h: Headline) -> list[Line]:
    """Each section not measured, and each headline figure not measured inside a measured section."""
    lines = []
    for attr, label, href in _SECTIONS:
        section = getattr(sheet, attr)
        if isinstance(section, NotMeasured):
            lines.append(Line(label, section.reason, "not_measured", href, "nm"))
    section_of = {"pass_at_1": "accuracy", "energy_wh_per_1000_requests": "energy"}
    for f in h.figures:
        home = section_of.get(f.id, "load")
        if f.verdict == "not_measured" and not isinstance(getattr(sheet, home), NotMeasured):
            lines.append(Line(f.label, f.note, "not_measured", f"#{home}", "nm"))
    energy = sheet.energy
    if not isinstance(energy, NotMeasured) and isinstance(energy.carbon, NotMeasured):
        lines.append(Line("Carbon", energy.carbon.reason, "not_measured", "#energy", "nm"))
    return lines


def _limitations(sheet: Factsheet, h: Headline, weak_points: int) -> list[Line]:
    """What the measurements themselves flag, one line per kind: figures on too few samples, lower bounds and
    unconfirmed capacities, repeats on a busy host."""
    few = [f.label for f in h.figures if f.verdict == "insufficient" and f.value is not None]
    lines = []
    if few:
        lines.append(Line("Too few samples", f"{', '.join(few)}: each p99 rests on too few samples to decide "
                          "against the SLO (MLPerf early stopping); indicative only", "rederived", "#headline",
                          "bad"))  # fmt: skip
    if weak_points:
        lines.append(Line("Load sweep", f"{weak_points} point(s) with p99 figures resting on too few samples: "
                          "the sweep is indicative", "rederived", "#load", "bad"))  # fmt: skip
    for f in h.figures:
        if f.verdict in ("lower_bound", "not_confirmed"):
            # a not-confirmed figure's note opens with its verdict (factsheet/document/headline/figures.py)
            text = f.note if f.verdict == "not_confirmed" else f"{VERDICT_WORDS[f.verdict]}: {f.note}"
            lines.append(Line(f.label, text, "rederived", "#capacity", "bad"))
    gov = sheet.governance
    for text in gov.known_limitations if gov is not None else []:
        lines.append(Line("Declared", text, "declared", "#governance"))
    busy = max((f.rebuild.busy, f.rebuild.k) for f in h.figures if f.rebuild is not None) if any(
        f.rebuild is not None for f in h.figures) else (0, 0)  # fmt: skip
    if busy[0]:
        lines.append(Line("Busy host", f"{busy[0]} of {busy[1]} repeats ran while other work used the host: "
                          "their spread may be wider than a quiet host's", "measured", "#host-load", "bad"))  # fmt: skip
    return lines


def _provenance(
    sheet: Factsheet, signing_key_id: str | None, json_sha256: str | None, planned_at: str | None
) -> list[Line]:
    prov = sheet.provenance
    commit = (
        f", commit {prov.git_commit[:12]}{' (uncommitted changes)' if prov.git_dirty else ''}"
        if prov.git_commit
        else ""
    )
    lines = [
        Line(
            "Built",
            f"{prov.finished_at} by {prov.tool} {prov.tool_version}{commit}, from a spec with "
            f"digest {prov.spec_sha256[:19]}…",
            "measured",
            "#provenance",
        ),  # fmt: skip
    ]
    if signing_key_id:
        lines.append(Line("Signature", f"signed: Ed25519 key id {signing_key_id}; the in-toto attestation "
                          "beside this document covers every file (`factsheet verify`)", "measured",
                          "#provenance", "ok"))  # fmt: skip
    else:
        lines.append(Line("Signature", "not signed when rendered: nothing vouches that these files are the "
                          "build's but their digests", "not_measured", "#provenance", "nm"))  # fmt: skip
    if planned_at:
        lines.append(Line("Gate set before", f"the gate's policies were signed at {planned_at}, before the first "
                          "request was sent (`factsheet verify` fails if the gate ran others)", "measured",
                          "#provenance", "ok"))  # fmt: skip
    if json_sha256:
        lines.append(Line("Record", f"factsheet.json {json_sha256} (attached to the PDF); every figure "
                          "re-derives from the raw records it lists", "measured", "#provenance"))  # fmt: skip
    return lines
