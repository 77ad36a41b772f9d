"""The measured figures every export carries, read once from a factsheet: what was not measured
never appears (no defaults, no zeros)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from factsheet.document.headline.figures import p99_verdict, stated_or_computed
from factsheet.document.headline_model import VERDICT_WORDS
from factsheet.document.schema import Factsheet
from factsheet.export.text import checked_name
from factsheet.untrusted.limits import MAX_FACTSHEET_BYTES
from factsheet.untrusted.reading import read_given
from probes.core.digests import sha256_bytes
from probes.core.measurement import NotMeasured, shown

_LATENCY = (("ttft_ms", "TTFT"), ("tpot_ms", "TPOT"), ("e2el_ms", "E2EL"))


@dataclass(frozen=True)
class Figure:
    key: str  # machine name, e.g. "ttft_ms.p99" or "pass@1"
    label: str  # e.g. "TTFT p99"
    value: float
    unit: str  # "ms", "req/s", "tokens/s", "fraction of tasks"
    slice: str  # what the figure was measured on
    definition: str
    config: str = ""  # the variant of the benchmark or workload: tests run, or the load point's label
    n: int | None = None  # samples or tasks it rests on
    ci: tuple[float, float] | None = None
    ci_confidence: float | None = None
    verdict: str = ""  # what its samples support, in words (every p99 states one: headline.VERDICT_WORDS)
    lower_bound: bool = False  # the value is a lower bound (≥ value)

    def qualifier(self) -> str:
        """The verdict (and a lower bound) in words, for a format with no field of its own: '' when none."""
        bound = f"lower bound: ≥ {self.value:g}" if self.lower_bound else ""
        return "; ".join(x for x in (bound, self.verdict) if x and x != "lower bound")


@dataclass(frozen=True)
class InferenceEnergy:
    """Gross energy of the measured components over the steady window of one load point."""

    kwh: float
    j_per_output_token: float | None
    boundary: str  # which components the figure covers
    window_s: float
    requests: int
    output_tokens: int


@dataclass(frozen=True)
class Source:
    """The factsheet an export comes from."""

    path: Path
    sha256: str  # 'sha256:<hex>' of the file's bytes
    sheet: Factsheet


def source(path: Path, sheet: Factsheet) -> Source:
    """The factsheet at `path`; its names are refused here when no export can carry them (see text.py)."""
    path = Path(path)
    ident = sheet.identity
    names = [
        ("factsheet file name", path.name),
        ("name", sheet.name),
        ("identity.name", ident.name),
        ("identity.version", ident.version),
        ("identity.owner", ident.owner),
        ("identity.license", ident.license),
    ]
    if not isinstance(sheet.load, NotMeasured):
        names += [(f"load.points[{i}].result.label", p.result.label) for i, p in enumerate(sheet.load.points)]
    for field, value in names:
        checked_name(field, value)
    data = read_given(path, MAX_FACTSHEET_BYTES, "factsheet")  # bounded like load_factsheet's read
    return Source(path, sha256_bytes(data), sheet)


HEADLINE = "headline"  # the config (variant) of the headline's figures in every export


def headline_figures(sheet: Factsheet) -> list[Figure]:
    """Page 1's figures, from the headline and nothing else (the sheet re-derived before an export reads
    it): each measured one with its interval (both ends), n and verdict; a capacity that is a lower bound
    says so; one whose confirmation failed is stated as not confirmed, never as a capacity."""
    out = []
    for f in stated_or_computed(sheet).figures:
        if f.value is None or f.verdict == "not_measured":
            continue
        label, where = f"{f.label} ({f.profile})" if f.profile else f.label, f"headline: {f.run or f.source}"
        unit = "fraction of tasks" if f.id == "pass_at_1" else f.unit  # as the accuracy figures state it
        ci = None
        if f.id.split(".")[0] == "capacity_at_slo":  # its range is what the probes cannot tell apart, no CI
            if f.interval is not None:
                low, high = (shown(v) for v in (f.interval.lower, f.interval.upper))
                where += f"; range the probes cannot tell apart [{low}, {high})"
            if f.verdict == "not_confirmed":
                label = f"{label}, not confirmed"
        elif f.interval is not None:
            ci = f.interval.bounds()
        out.append(
            Figure(
                f"{HEADLINE}.{f.id}",
                label,
                f.value,
                unit,
                where,
                f.rule,
                HEADLINE,
                f.n,
                ci,
                0.95 if ci else None,
                VERDICT_WORDS[f.verdict],
                f.lower_bound,
            )  # fmt: skip
        )
    return out


def serving_figures(sheet: Factsheet) -> list[Figure]:
    if isinstance(sheet.load, NotMeasured):
        return []
    out: list[Figure] = []
    for entry in sheet.load.points:
        m, label = entry.result.metrics, entry.result.label
        where = f"load point {label}"
        if not m.completed:
            continue
        for key, name in _LATENCY:
            dist = getattr(m, key)
            for q in (50, 99):
                value = dist.p(q)
                if value is None:
                    continue
                ci = m.percentile_ci.get(f"{key}.p{q}")
                bounds = ci.bounds() if ci else None
                # A p99 states what its samples support; a sweep point's is indicative where they cannot.
                verdict = VERDICT_WORDS[p99_verdict(m, key)] if q == 99 else ""
                out.append(
                    Figure(
                        f"{key}.p{q}",
                        f"{name} p{q}",
                        value,
                        "ms",
                        where,
                        dist.definition,
                        label,
                        dist.n,
                        bounds,
                        ci.confidence if bounds else None,
                        verdict,
                    )  # fmt: skip
                )
        if m.output_throughput is not None:
            out.append(
                Figure(
                    "output_throughput",
                    "output throughput",
                    m.output_throughput,
                    "tokens/s",
                    where,
                    m.definitions.get("output_throughput", ""),
                    label,
                    m.completed,
                )  # fmt: skip
            )
        if m.goodput is not None:
            gci = m.goodput_ci
            bounds = gci.bounds() if gci else None
            out.append(
                Figure(
                    "goodput",
                    "goodput",
                    m.goodput,
                    "req/s",
                    where,
                    m.definitions.get("goodput", ""),
                    label,
                    m.measured,
                    bounds,
                    gci.attainment.confidence if bounds else None,
                )  # fmt: skip
            )
    return out


def accuracy_figures(sheet: Factsheet) -> list[Figure]:
    if isinstance(sheet.accuracy, NotMeasured):
        return []
    res = sheet.accuracy.result
    rates = res.pass_rates
    out = []
    for tests, table in (("base", rates.base), ("base+plus", rates.plus)):
        for k, value in sorted((table or {}).items()):
            where = f"{res.benchmark} ({tests} tests), {res.subset}"
            out.append(
                Figure(k, k, value, "fraction of tasks", where, rates.definition, tests, rates.n_tasks)
            )
    return out


def inference_energy(sheet: Factsheet) -> InferenceEnergy | None:
    if isinstance(sheet.energy, NotMeasured) or isinstance(sheet.energy.energy, NotMeasured):
        return None
    result = sheet.energy.energy
    if isinstance(result.total, NotMeasured):
        return None
    gross = result.total.gross
    per_token = gross.j_per_output_token
    return InferenceEnergy(
        kwh=gross.energy_j.value / 3.6e6,
        j_per_output_token=None if isinstance(per_token, NotMeasured) else per_token.value,
        boundary=result.total.boundary,
        window_s=result.duration_s,
        requests=result.requests,
        output_tokens=result.output_tokens,
    )
