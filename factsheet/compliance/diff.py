"""`factsheet diff`: the regression gate between two builds, deciding noise from the raw records.

For each figure both factsheets measured on the same workload: old, new, change, and whether the change is
beyond noise — a bootstrap CI of the difference of percentiles from the two steady windows' raw samples;
a two-proportion z-test for SLO attainment and pass@1; a Poisson rate comparison for goodput. A figure regresses when it got
worse beyond noise *and* beyond its threshold. Figures that cannot be compared are listed with the reason.

Both factsheets are re-derived from their raw records first: a figure either side's records do not support
is not comparable; a candidate whose figures do not re-derive, or a diff with nothing comparable, is no
"no regression" (exit 1).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field
from scipy.stats import norm

from factsheet import provenance as prov
from factsheet.compliance.evidence import PointRecords, load_point_records
from factsheet.compliance.support import Support, reasons, support
from factsheet.export.text import markdown_code, markdown_text
from factsheet.outputs import DIFF_HTML, DIFF_JSON, DIFF_MARKDOWN
from factsheet.rederive import Discrepancy
from factsheet.schema import AccuracySection, Factsheet, LoadPointEntry, LoadSection
from factsheet.untrusted.limits import MAX_FACTSHEET_BYTES
from factsheet.untrusted.reading import read_given
from probes.core.digests import sha256_bytes
from probes.core.errors import InputError
from probes.core.measurement import PERCENTILE_METHOD, Model
from probes.load.metrics import LATENCY_METRICS

# 1.1.0: verdicts "unsupported" and "inconclusive", with verdict_reason and each side's unsupported figures.
DIFF_VERSION = "1.1.0"
BOOTSTRAP_RESAMPLES = 2000
NOISE_CONFIDENCE = 0.95
DEFAULT_LIMITS: dict[str, str | float] = {
    **{f"{m}.p{q}": "10%" for m in LATENCY_METRICS for q in (50, 99)},
    "goodput": "5%",
    "slo_attainment": 0.02,
    "pass@1": 0.02,
}
BOOTSTRAP_METHOD = (
    f"percentile bootstrap ({BOOTSTRAP_RESAMPLES} resamples of each steady window's raw samples, seed 0) of "
    f"new − old; percentiles by {PERCENTILE_METHOD}"
)
RATE_METHOD = (
    "difference of two Poisson rates (good requests recounted from the raw records / window), normal "
    "approximation; conservative for closed loops, whose counts vary less than Poisson"
)
Z_METHOD = "two-proportion z-test (pooled), two-sided; Wald interval of new − old"


class DiffError(InputError):
    """A diff asked for in a way that cannot work (bad threshold)."""


class Limit(Model):
    value: float
    relative: bool = Field(description="True: a fraction of the old value; False: in the figure's unit")
    source: str

    def text(self) -> str:
        return f"{self.value:.0%}" if self.relative else f"{self.value:g}"


class Noise(Model):
    method: str
    lower: float | None = Field(description=f"{NOISE_CONFIDENCE:.0%} interval of new − old")
    upper: float | None
    p_value: float | None = None


class FigureDiff(Model):
    figure: str = Field(description="e.g. 'e2el_ms.p99', 'goodput', 'pass@1'")
    scope: str = Field(description="the load point label, or 'accuracy'")
    unit: str
    higher_is_better: bool
    status: Literal["compared", "not_comparable"]
    reason: str | None = None
    old: float | None = None
    new: float | None = None
    change: float | None = None
    change_rel: float | None = None
    n_old: int | None = None
    n_new: int | None = None
    noise: Noise | None = None
    beyond_noise: bool | None = None
    limit: Limit | None = None
    beyond_limit: bool | None = None
    regression: bool = False


Verdict = Literal["no_regression", "regression", "unsupported", "inconclusive"]
HEADS: dict[str, str] = {
    "no_regression": "No regression",
    "regression": "**Regression**",
    "unsupported": "**Not supported**: the candidate's figures do not re-derive from its raw records",
    "inconclusive": "**Inconclusive**: nothing was comparable",
}


class DiffReport(Model):
    diff_version: Literal["1.1.0"] = DIFF_VERSION
    kind: Literal["llm-factsheet-diff"] = "llm-factsheet-diff"
    old: str
    new: str
    old_sha256: str
    new_sha256: str
    verdict: Verdict = Field(
        description="regression; unsupported (the candidate's figures do not re-derive from its records); "
        "inconclusive (no figure was comparable); no_regression. Only no_regression exits 0."
    )
    verdict_reason: str = Field(description="the verdict in words")
    old_unsupported: list[Discrepancy] = Field(
        default_factory=list, description="figures of the old factsheet its raw records do not support"
    )
    new_unsupported: list[Discrepancy] = Field(
        default_factory=list, description="figures of the new factsheet its raw records do not support"
    )
    rule: str = (
        "a regression is a change for the worse that is beyond noise (the 95 % bootstrap interval of new − old "
        "excludes 0; for shares, the z-test's p < 0.05) "
        "and beyond its limit"
    )
    limits: dict[str, Limit]
    figures: list[FigureDiff]
    generated_at: str
    tool_version: str

    def markdown(self) -> str:
        """The report as GitHub-flavoured Markdown (a CI job posts it as a pull-request comment). Text from
        the two factsheets (labels, reasons, paths) goes through factsheet/export/text.py: one line, markup
        backslash-escaped, so a label holding a newline, `|`, `# heading` or `<img>` stays in its cell."""
        t = markdown_text
        lines = [
            f"### factsheet diff: {HEADS[self.verdict]}",
            "",
            f"{markdown_code(self.old)} → {markdown_code(self.new)}. {t(self.rule)}.",
            "",
            f"{t(self.verdict_reason)}.",
            "",
            "| figure | scope | old | new | change | 95 % CI of change | limit | verdict |",
            "|---|---|---:|---:|---:|---|---:|---|",
        ]
        for f in self.figures:
            if f.status != "compared":
                lines.append(f"| {t(f.figure)} | {t(f.scope)} | | | | | | not comparable: {t(f.reason)} |")
                continue
            ci = f"[{_f(f.noise.lower)}, {_f(f.noise.upper)}]" if f.noise else "—"
            rel = f" ({f.change_rel:+.1%})" if f.change_rel is not None else ""
            verdict = (
                "**regression**"
                if f.regression
                else ("beyond noise, within limit" if f.beyond_noise else "within noise")
                if f.beyond_noise is not None
                else "noise not decidable"
            )
            limit = f.limit.text() if f.limit else "—"
            lines.append(
                f"| {t(f.figure)} | {t(f.scope)} | {_f(f.old)} | {_f(f.new)} | {_f(f.change)}{rel} | {ci} | "
                f"{t(limit)} | {verdict} |"
            )
        return "\n".join(lines) + "\n"


def _f(v: float | None) -> str:
    return "—" if v is None else f"{v:.4g}"


def parse_limits(raw: dict[str, str | float], source: str) -> dict[str, Limit]:
    out = {}
    for key, value in raw.items():
        text = str(value).strip()
        m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*(%?)", text)
        if m is None:
            raise DiffError(f"{source}: max_regression.{key}: {value!r} is not a number or a percentage")
        number = float(m.group(1))
        out[key] = Limit(
            value=number / 100 if m.group(2) else number, relative=bool(m.group(2)), source=source
        )
    return out


def compare(
    old: Factsheet, old_path: Path, new: Factsheet, new_path: Path, limits: dict[str, Limit]
) -> DiffReport:
    applied = parse_limits(DEFAULT_LIMITS, "default") | limits
    rng = np.random.default_rng(0)
    # Re-derived first: no row is compared on a figure its records do not give.
    sides = {"old": (old, support(old, old_path.parent)), "new": (new, support(new, new_path.parent))}
    figures = _load_figures(old, old_path, new, new_path, rng) + _accuracy_figures(old, new)
    figures = [_supported(f, sides) for f in figures]
    for f in figures:
        _judge(f, applied.get(f.figure))
    verdict, why = _verdict(figures, sides["new"][1])
    return DiffReport(
        old=str(old_path),
        new=str(new_path),
        old_sha256=_digest(old_path),
        new_sha256=_digest(new_path),
        verdict=verdict,
        verdict_reason=why,
        old_unsupported=[u.discrepancy for u in sides["old"][1].problems],
        new_unsupported=[u.discrepancy for u in sides["new"][1].problems],
        limits=applied,
        figures=figures,
        generated_at=prov.utc_now(),
        tool_version=prov.tool_version(),
    )


def _verdict(figures: list[FigureDiff], new: Support) -> tuple[Verdict, str]:
    compared = sum(f.status == "compared" for f in figures)
    regressed = [f"{f.figure} ({f.scope})" for f in figures if f.regression]
    if regressed:
        return "regression", f"regression beyond noise and threshold: {', '.join(regressed)}"
    unsupported = f"the candidate's figures are {reasons(new.problems)}" if new.problems else ""
    if not compared:
        why = f"nothing was comparable: all {len(figures)} figure(s) not comparable"
        return "inconclusive", f"{why}; {unsupported}" if unsupported else why
    if unsupported:
        return "unsupported", unsupported
    return "no_regression", f"{compared} of {len(figures)} figure(s) compared, none regressed"


def _supported(f: FigureDiff, sides: dict[str, tuple[Factsheet, Support]]) -> FigureDiff:
    """The row, or not comparable when either side's records do not support what it rests on."""
    for which, (sheet, found) in sides.items():
        path = _row_path(sheet, f.scope)
        problems = found.of(path) if path is not None else []
        if problems:
            return _nc(f.figure, f.scope, f"{which} factsheet: {reasons(problems, most=1)}")
    return f


def _row_path(sheet: Factsheet, scope: str) -> str | None:
    """What a row rests on in one sheet: its load point (by label), or the accuracy pass rates."""
    if scope == "accuracy":
        return "accuracy.result.pass_rates"
    if not isinstance(sheet.load, LoadSection):
        return None
    return next(
        (f"load.points[{i}]" for i, e in enumerate(sheet.load.points) if e.result.label == scope), None
    )


def _digest(path: Path) -> str:
    try:
        return sha256_bytes(read_given(path, MAX_FACTSHEET_BYTES, "factsheet"))
    except OSError:
        return "unreadable"


def _judge(f: FigureDiff, limit: Limit | None) -> None:
    if f.status != "compared" or f.old is None or f.new is None:
        return
    f.change = f.new - f.old
    f.change_rel = f.change / f.old if f.old else None
    worse = f.change < 0 if f.higher_is_better else f.change > 0
    if f.noise is not None and f.noise.p_value is not None:  # a test decides; its interval is shown
        f.beyond_noise = f.noise.p_value < 1 - NOISE_CONFIDENCE
    elif f.noise is not None and f.noise.lower is not None and f.noise.upper is not None:
        f.beyond_noise = f.noise.lower > 0 or f.noise.upper < 0
    f.limit = limit
    if limit is not None:
        size = abs(f.change_rel) if limit.relative and f.change_rel is not None else abs(f.change)
        f.beyond_limit = worse and size > limit.value
    f.regression = bool(worse and f.beyond_noise and f.beyond_limit)


_WORKLOAD_DESCRIPTION = {"profile", "generator_version", "parameters", "requests_digest"}


def workload_key(e: LoadPointEntry) -> str:
    """What must be equal for two load points to be compared: the point as run and the prompts sent."""
    data = {
        "point": e.result.point.model_dump(mode="json"),
        # What identifies the prompts; the profile's description (schema >= 1.3.0) and the bodies' digest
        # (which names the served model) leave it out, so an older factsheet's synthetic points compare.
        "workload": e.result.workload.model_dump(mode="json", exclude=_WORKLOAD_DESCRIPTION),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _load_figures(old, old_path, new, new_path, rng) -> list[FigureDiff]:
    names = [f"{m}.p{q}" for m in LATENCY_METRICS for q in (50, 99)] + ["goodput", "slo_attainment"]
    if not isinstance(old.load, LoadSection) or not isinstance(new.load, LoadSection):
        which = "old" if not isinstance(old.load, LoadSection) else "new"
        return [_nc(n, "load", f"load not measured in the {which} factsheet") for n in names]
    old_recs, new_recs = load_point_records(old, old_path.parent), load_point_records(new, new_path.parent)
    old_by = {e.result.label: e for e in old.load.points}
    out = []
    for e in new.load.points:
        label = e.result.label
        o = old_by.pop(label, None)
        if o is None:
            out += [_nc(n, label, "no such load point in the old factsheet") for n in names]
        elif workload_key(o) != workload_key(e):
            out += [
                _nc(n, label, "different workload (point settings or prompts digest differ)") for n in names
            ]
        else:
            out += _point_figures(label, o, old_recs[label], e, new_recs[label], rng)
    for label in old_by:
        out += [_nc(n, label, "no such load point in the new factsheet") for n in names]
    return out


def _nc(figure: str, scope: str, reason: str) -> FigureDiff:
    return FigureDiff(
        figure=figure,
        scope=scope,
        unit="",
        higher_is_better=figure in ("goodput", "slo_attainment", "pass@1"),
        status="not_comparable",
        reason=reason,
    )


def _point_figures(label, o: LoadPointEntry, ro: PointRecords, n: LoadPointEntry, rn: PointRecords, rng):
    out = []
    for rec, which in ((ro, "old"), (rn, "new")):
        status = rec.check().status
        if status != "verified":
            names = [f"{m}.p{q}" for m in LATENCY_METRICS for q in (50, 99)] + ["goodput", "slo_attainment"]
            return [
                _nc(x, label, f"raw records of the {which} factsheet {status} ({rec.file.path})")
                for x in names
            ]
    for m in LATENCY_METRICS:
        a, b = np.asarray(ro.samples(m), dtype=float), np.asarray(rn.samples(m), dtype=float)
        for q in (50, 99):
            name = f"{m}.p{q}"
            if a.size < 2 or b.size < 2:
                out.append(_nc(name, label, f"too few samples ({a.size} old, {b.size} new)"))
                continue
            lo, hi = _bootstrap(a, b, lambda x, q=q: np.percentile(x, q, axis=-1, method="linear"), rng)
            out.append(
                FigureDiff(
                    figure=name,
                    scope=label,
                    unit="ms",
                    higher_is_better=False,
                    status="compared",
                    old=float(np.percentile(a, q, method="linear")),
                    new=float(np.percentile(b, q, method="linear")),
                    n_old=int(a.size),
                    n_new=int(b.size),
                    noise=Noise(method=BOOTSTRAP_METHOD, lower=lo, upper=hi),
                )
            )
    mo, mn = o.result.metrics, n.result.metrics
    if mo.slo != mn.slo or mo.goodput is None or mn.goodput is None:
        why = "different SLOs" if mo.slo != mn.slo else "no SLO threshold, so no goodput"
        return out + [_nc("goodput", label, why), _nc("slo_attainment", label, why)]
    (good_o, meas_o), (good_n, meas_n) = ro.good_counts(), rn.good_counts()  # recounted from raw records
    out.append(_rate_diff("goodput", label, good_o, mo.duration_s, good_n, mn.duration_s, meas_o, meas_n))
    out.append(_two_proportion("slo_attainment", label, "share", good_o, meas_o, good_n, meas_n))
    return out


def _rate_diff(figure, scope, k1, t1, k2, t2, n1, n2) -> FigureDiff:
    """Good completions per second of window, compared as two Poisson rates (normal approximation)."""
    if not t1 or not t2:
        return _nc(figure, scope, "no steady window in one of the factsheets")
    r1, r2 = k1 / t1, k2 / t2
    se = math.sqrt(k1 / t1**2 + k2 / t2**2)
    z = norm.ppf(1 - (1 - NOISE_CONFIDENCE) / 2)
    return FigureDiff(
        figure=figure, scope=scope, unit="req/s", higher_is_better=True, status="compared",
        old=r1, new=r2, n_old=n1, n_new=n2,
        noise=Noise(method=RATE_METHOD, lower=(r2 - r1) - z * se, upper=(r2 - r1) + z * se),
    )  # fmt: skip


def _bootstrap(a: np.ndarray, b: np.ndarray, stat, rng) -> tuple[float, float]:
    """Percentile-bootstrap interval of stat(new) − stat(old), resampling each sample independently."""
    diffs = []
    chunk = max(1, min(BOOTSTRAP_RESAMPLES, 4_000_000 // max(a.size, b.size)))
    done = 0
    while done < BOOTSTRAP_RESAMPLES:
        k = min(chunk, BOOTSTRAP_RESAMPLES - done)
        sa = stat(a[rng.integers(0, a.size, size=(k, a.size))])
        sb = stat(b[rng.integers(0, b.size, size=(k, b.size))])
        diffs.append(sb - sa)
        done += k
    d = np.concatenate(diffs)
    alpha = 1 - NOISE_CONFIDENCE
    return float(np.quantile(d, alpha / 2)), float(np.quantile(d, 1 - alpha / 2))


def _two_proportion(figure, scope, unit, k1, n1, k2, n2) -> FigureDiff:
    if not n1 or not n2:
        return _nc(figure, scope, "no trials in one of the factsheets")
    p1, p2 = k1 / n1, k2 / n2
    pooled = (k1 + k2) / (n1 + n2)
    se0 = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    p_value = 1.0 if se0 == 0 else float(2 * norm.sf(abs(p2 - p1) / se0))
    se = math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    z = norm.ppf(1 - (1 - NOISE_CONFIDENCE) / 2)
    lo, hi = (p2 - p1) - z * se, (p2 - p1) + z * se
    return FigureDiff(
        figure=figure, scope=scope, unit=unit, higher_is_better=True, status="compared",
        old=p1, new=p2, n_old=n1, n_new=n2, noise=Noise(method=Z_METHOD, lower=lo, upper=hi, p_value=p_value),
    )  # fmt: skip


def _accuracy_figures(old: Factsheet, new: Factsheet) -> list[FigureDiff]:
    if not isinstance(old.accuracy, AccuracySection) or not isinstance(new.accuracy, AccuracySection):
        if isinstance(old.accuracy, AccuracySection) or isinstance(new.accuracy, AccuracySection):
            which = "old" if not isinstance(old.accuracy, AccuracySection) else "new"
            return [_nc("pass@1", "accuracy", f"accuracy not measured in the {which} factsheet")]
        return []
    a, b = old.accuracy.result, new.accuracy.result
    if a.dataset != b.dataset or a.tests_run != b.tests_run or a.subset != b.subset:
        return [_nc("pass@1", "accuracy", "different dataset, subset or tests")]
    ra, rb = a.pass_rates.plus or a.pass_rates.base, b.pass_rates.plus or b.pass_rates.base
    if "pass@1" not in ra or "pass@1" not in rb:
        return [_nc("pass@1", "accuracy", "pass@1 not reported")]
    na, nb = a.pass_rates.n_tasks, b.pass_rates.n_tasks
    return [
        _two_proportion(
            "pass@1",
            "accuracy",
            "fraction of tasks",
            round(ra["pass@1"] * na),
            na,
            round(rb["pass@1"] * nb),
            nb,
        )
    ]


def write_diff(report: DiffReport, out_dir: Path) -> list[Path]:
    """diff.json (the record), diff.md and diff.html through the one document renderer, written as a set."""
    # Imported here: `factsheet schema` imports this module for DiffReport alone and needs no renderer.
    from factsheet.render import check_folder, page, write_set

    out_dir = check_folder(out_dir)
    html = page("diff.html.j2", report=report)
    return write_set(
        [
            (out_dir / DIFF_JSON, report.model_dump_json(indent=2).encode()),
            (out_dir / DIFF_MARKDOWN, report.markdown().encode()),
            (out_dir / DIFF_HTML, html.encode()),
        ]
    )
