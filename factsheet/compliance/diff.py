"""`factsheet diff`: the regression gate between two builds, on what the factsheets claim.

What decides the verdict is what page 1 claims: capacity at SLO of the load section and of each compared
workload (its bracket, whether a long run confirmed it; a lower bound compared as a lower bound), the figures
of the confirmation runs behind those answers, and pass@1. The sweep's load points stay in the report as
*indicative* rows: short runs whose figures never decide the exit code.

Noise, each decided by a method valid at its n (issue 28; a percentile bootstrap of a p99 from 47 samples
gave a 0.3 ms wide interval, and the gate alarmed on it):

- a percentile (p50, p99) is compared only when both sides' samples support it (MLPerf early stopping,
  `probes.load.stats.min_samples`: 459 samples for a p99 at 99 %); otherwise "not comparable: too few
  samples". Its noise: each side's distribution-free order-statistic interval (`quantile_ci`, 97.5 % each,
  so their difference interval covers at ≥ 95 % by Bonferroni); beyond noise when the two do not overlap;
- shares (SLO attainment, pass@1): Fisher's exact test, with the Newcombe hybrid score interval of new − old;
- goodput: two Poisson rates;
- capacity: each side's established range — at least its confirmed answer (or the range's low, a probe whose
  p99 interval lay wholly within the threshold), below the range's high (a probe that clearly failed);
  beyond noise when the new range lies wholly below (or above) the old one.

- the confirmation run's figures when both sides repeated it (spec `repeats`): between-run
  variance decides. Welch's t-test on the k repeats' values of each side (the figure's run-to-run spread, not
  one run's sampling noise), two-sided at α = 5 % / m, m the figures so decided in the diff (Bonferroni): a
  false alarm on any of them in at most 5 % of diffs between builds of one deployment, if the repeats are
  independent and normal; the limit lowers that further.

A figure regresses when it got worse beyond noise *and* beyond its limit. Without repeats on both sides the
noise is within-run only, and the report says so. A row whose runs were measured on a busy host
(probes/hostload: other processes' CPU and steal) says so in its notes, on either side, and is never a
regression: a change for the worse beyond noise and limit there is "not decided: busy host", and the diff
is then inconclusive rather than passed.

Both factsheets are re-derived from their raw records first: a figure either side's records do not support
is not comparable; a candidate whose figures do not re-derive, or a diff with nothing comparable, is no
"no regression" (exit 1).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from factsheet.compliance.deployment_diff import DEPLOYMENT_RULE, DeploymentChange, deployment_changes
from factsheet.compliance.evidence import PointRecords, load_point_records
from factsheet.compliance.host_speed import host_note, host_ratio
from factsheet.compliance.support import Support, reasons, support
from factsheet.document.files import DIFF_HTML, DIFF_JSON, DIFF_MARKDOWN
from factsheet.document.headline.figures import REBUILD_FIGURES, capacity_figure, run_interval
from factsheet.document.headline.rebuild import t_quantile, within_half
from factsheet.document.headline.repeated import Repeated, host_load_at, repeated
from factsheet.document.host_load import RunLoad, busy, busy_note, repeat_loads, search_loads
from factsheet.document.schema import AccuracySection, CapacitySection, Factsheet, LoadPointEntry, LoadSection
from factsheet.document.stamp import tool_version, utc_now
from factsheet.document.versions import DIFF_VERSION, DiffVersion
from factsheet.export.text import markdown_code, markdown_text
from factsheet.rederive import Discrepancy
from factsheet.untrusted.limits import MAX_FACTSHEET_BYTES
from factsheet.untrusted.reading import read_given
from probes.core.digests import sha256_bytes
from probes.core.errors import InputError
from probes.core.measurement import MISSING, PERCENTILE_METHOD, Model, NotMeasured, shown
from probes.load.capacity import CapacityPoint, knob_point
from probes.load.metrics import LATENCY_METRICS, LoadMetrics
from probes.load.point import LoadPoint
from probes.load.stats import min_samples, quantile_ci

NOISE_CONFIDENCE = 0.95
# Each side's percentile interval: two 97.5 % intervals make a ≥ 95 % interval of their difference.
SIDE_CONFIDENCE = 1 - (1 - NOISE_CONFIDENCE) / 2
# The samples a percentile must rest on to be compared: MLPerf early stopping at 99 % (459 for a p99).
SUFFICIENCY_CONFIDENCE = 0.99
PERCENTILES = (50, 99)
CAPACITY = "capacity_at_slo"
DEFAULT_LIMITS: dict[str, str | float] = {
    **{f"{m}.p{q}": "10%" for m in LATENCY_METRICS for q in PERCENTILES},
    "goodput": "5%",
    "slo_attainment": 0.02,
    "pass@1": 0.02,
    CAPACITY: "10%",
}
QUANTILE_METHOD = (
    f"distribution-free order-statistic interval of each side's percentile ({SIDE_CONFIDENCE:.1%} each; "
    f"Bonferroni: [new.low − old.high, new.high − old.low] covers new − old at ≥ {NOISE_CONFIDENCE:.0%}); "
    f"beyond noise when the two intervals do not overlap; percentiles by {PERCENTILE_METHOD}"
)
RATE_METHOD = (
    "difference of two Poisson rates (good requests recounted from the raw records / window), normal "
    "approximation; conservative for closed loops, whose counts vary less than Poisson"
)
PROPORTION_METHOD = (
    "Fisher's exact test, two-sided (its p-value decides); Newcombe hybrid score interval of new − old "
    "(from each side's Wilson interval)"
)
CAPACITY_METHOD = (
    "each side's established range: at least its confirmed answer (unconfirmed: the range's low, a probe "
    "whose p99 interval lay wholly within the threshold), below the range's high (a probe that clearly "
    "failed; none: a lower bound). Interval of new − old: [new.low − old.high, new.high − old.low]; beyond "
    "noise when one range lies wholly below the other"
)
NOISE_SCOPE = (
    "within-run only: every interval is the noise of one run's own samples. Neither side repeated its "
    "headline runs (spec `repeats`), so no between-run variance is recorded, and a rebuild on the same host "
    "can move a figure further than these intervals: no load figure is decided on them"
)
FAMILY_ALPHA = 1 - NOISE_CONFIDENCE  # the chance of any false alarm among the between-run rows of one diff
# A run's figure carries its own sampling noise however closely k runs agreed: each side's spread is no less
# than its runs' mean within-run 95 % half-width standing for t(k − 1, 0.975) · s, as page 1's rebuild
# interval takes it (factsheet/document/headline/rebuild.py, WIDEN_METHOD), so the gate and page 1 agree on how
# far a rebuild may move a figure.
SPREAD_FLOOR = (
    "each side's s no less than its runs' mean within-run 95 % half-width / t(k − 1, 0.975), as page 1's "
    "rebuild interval takes it"
)
WELCH_METHOD = (
    "between-run: Welch's t-test on the repeats' values of each side (each repeat a fresh server start or a "
    "prefix-cache reset, each with its own seed), two-sided at alpha (Bonferroni: {family:.0%} over the {m} "
    "figure(s) so decided in this diff), "
    + SPREAD_FLOOR
    + "; the interval is Welch's (1 − alpha) interval of "
    "mean(new) − mean(old). False alarms: at most {family:.0%} of diffs between builds of one deployment "
    "(independent, normal repeats)"
)
# Page 1 states a rebuild interval for these figures of a confirmation run only; a p50 of 459 requests sits in
# a narrow band within one build and moves further between builds (bench/rebuilds.py, between builds against
# within one build), so its repeats are not its rebuild noise.
OFF_PAGE_ONE = (
    "not a page-1 figure: page 1 states no rebuild interval for it, so no build says how far a rebuild moves "
    "it; reported, never decides"
)
NOISE_SCOPE_BETWEEN = (
    "between-run where the baseline repeated the confirmation run ({m} figure(s): Welch's t-test on both "
    "sides' repeats, or the candidate's one run against the baseline's prediction interval; at most "
    "{family:.0%} false alarms over them together); within-run (one run's own samples) for the rest, which "
    "decide nothing"
)
BUSY = "busy host"
NO_BETWEEN = "no between-run noise"
NotDecided = Literal["busy host", "no between-run noise"]
OnInconclusive = Literal["pass", "fail"]
DEFAULT_ON_INCONCLUSIVE: OnInconclusive = "fail"
PREDICTION_METHOD = (
    "between-run, the baseline's repeats alone: the candidate's one run against the normal-theory prediction "
    "interval of the baseline's k repeats (mean ± t(k − 1, 1 − alpha/2) · s · √(1 + 1/k)), two-sided at alpha "
    "(Bonferroni: {family:.0%} over the {m} figure(s) so decided in this diff), " + SPREAD_FLOOR + "; the "
    "interval is of new − mean(old)"
)
SHARE_OVER_TASKS = (
    "a share over a fixed task set: a rebuild's pass count varies by at most the binomial variance this test "
    "assumes, so its noise covers a rebuild's"
)
INDICATIVE = "a sweep point: short, reported for information, never decides the verdict"


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
    lower: float | None = Field(
        description=f"{NOISE_CONFIDENCE:.0%} interval of new − old (between-run: 1 − alpha)"
    )
    upper: float | None
    p_value: float | None = None
    alpha: float | None = Field(
        None, description=f"the level p_value is judged at (None: {1 - NOISE_CONFIDENCE:g})"
    )


# A capacity that fell: the candidate's range ends at a value that failed where the baseline's answer held k of
# k. Which side of the SLO a run at the same load falls on moves between builds (two demo builds: chat sessions
# held 16 users in 3 of 3 runs, the next build's one run at 16 failed, p99 E2EL 2,745 → 3,033 ms against 3 s),
# so the fall is decided by the SLO's p99 of the runs there, between-run, not by one run's pass or fail.
CAPACITY_CHECK_METHOD = (
    "a fall decided between-run: the SLO's p99 in the candidate's long run(s) at its range's high (a value it "
    "failed) against the baseline's k repeats at its repeated value, no lower a load; the between-run test of "
    "the confirmation rows, in their Bonferroni family; worse beyond noise only when the candidate's p99 is "
    "higher beyond it. A high that rests on a short probe: " + "{probe}"
)
PROBE_METHOD = (
    "the probe's p99 no lower than its within-run 95 % interval's lower end, against the upper end of the "
    "baseline's (1 − alpha) prediction interval at its repeated value, mean + t(k − 1, 1 − alpha/2) · s · "
    "√(1 + 1/k) ("
    + SPREAD_FLOOR
    + "); worse beyond noise when the lower end lies above it, both noises counted "
    "(the interval is of new − that upper end, its upper end open)"
)
CAPACITY_CHECK_METHOD = CAPACITY_CHECK_METHOD.format(probe=PROBE_METHOD)


class CapacityCheck(Model):
    """The between-run test of a capacity that fell (CAPACITY_CHECK_METHOD)."""

    figure: str = Field(description="the SLO's p99 metric, e.g. 'e2el_ms.p99'")
    old_value: float = Field(description="the load of the baseline's repeats (its answer when it held)")
    new_value: float = Field(description="the load the candidate failed at: its range's high")
    old_repeats: list[float] = Field(description="the figure in each of the baseline's k repeats")
    new_runs: list[float] = Field(
        description="the figure in each of the candidate's long runs at new_value (none: a short probe's)"
    )
    new_probe_lower: float | None = Field(
        None, description="without long runs: the failing probe's within-run 95 % lower end of the figure"
    )
    old_within_half: float | None = None
    new_within_half: float | None = None
    noise: Noise | None = Field(None, description="the test at the family's level")
    worse: bool | None = Field(None, description="the candidate's p99 higher beyond noise")


class FigureDiff(Model):
    figure: str = Field(description="e.g. 'e2el_ms.p99', 'goodput', 'pass@1', 'capacity_at_slo'")
    scope: str = Field(
        description="the load point label, the capacity search (and its confirmation), or 'accuracy'"
    )
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
    regression: bool = Field(
        False, description="worse beyond noise and limit on a row that decides (never an indicative one)"
    )
    indicative: bool = Field(
        False, description=f"{INDICATIVE}; or a confirmation run's figure {OFF_PAGE_ONE}"
    )
    old_lower_bound: bool = Field(
        False, description="the old value is a lower bound (every probe up to the search's maximum passed)"
    )
    new_lower_bound: bool = Field(False, description="the new value is a lower bound")
    notes: list[str] = Field(default_factory=list, description="what a reader must know to read the row")
    old_repeats: list[float] | None = Field(
        None, description="between-run: the figure in each of the old side's repeats"
    )
    new_repeats: list[float] | None = Field(None, description="between-run: the new side's")
    old_within_half: float | None = Field(
        None,
        description="between-run: the old side's repeats' mean within-run 95 % half-width of the figure, "
        "which bounds its spread from below (None: no run states an interval)",
    )
    new_within_half: float | None = Field(None, description="between-run: the new side's (with its repeats)")
    busy_host: bool = Field(False, description="a run of the row was measured on a busy host, on either side")
    not_decided: NotDecided | None = Field(
        None,
        description="a row that decides, not decided: why. 'busy host' (worse beyond noise and limit); "
        "'no between-run noise' (whatever its change: its noise is one run's own)",
    )
    between_run: bool = Field(
        False,
        description="the row's noise covers a rebuild's (both sides repeated the run, the "
        "baseline's repeats, or a share over a fixed task set); only such a row decides",
    )
    too_few_samples: bool = Field(
        False, description="not comparable within-run: a side's samples do not support the percentile"
    )
    host_ratio: float | None = Field(
        None,
        description="between-run rows: the candidate's median host-speed kernel time ÷ the baseline's over the "
        "runs compared, noted and never applied (factsheet/compliance/host_speed.py; None: not timed)",
    )
    capacity_check: CapacityCheck | None = Field(
        None, description=f"capacity at SLO, when it fell by the ranges: {CAPACITY_CHECK_METHOD}"
    )
    decided_by: str | None = Field(
        None,
        description="a row not compared whose question another row decides: the confirmation runs of two "
        "different answers are at different loads, and the capacity row compares the answers",
    )

    @property
    def worse_beyond(self) -> bool:
        """Worse beyond noise and limit, whether or not the row decides."""
        if self.change is None:
            return False
        worse = self.change < 0 if self.higher_is_better else self.change > 0
        return bool(worse and self.beyond_noise and self.beyond_limit)

    def verdict_text(self) -> str:
        if self.regression:
            return "regression"
        if self.not_decided:
            return f"not decided: {self.not_decided}"
        if self.beyond_noise is None:
            text = "noise not decidable"
        elif self.worse_beyond:
            text = "worse beyond noise and limit"
        else:
            text = "beyond noise, within limit" if self.beyond_noise else "within noise"
        return f"indicative: {text}" if self.indicative else text

    def value_text(self, which: str) -> str:
        value, bound = (
            (self.old, self.old_lower_bound) if which == "old" else (self.new, self.new_lower_bound)
        )
        return ("≥ " if bound else "") + _f(value)


Verdict = Literal["no_regression", "regression", "unsupported", "inconclusive"]
HEADS: dict[str, str] = {
    "no_regression": "No regression",
    "regression": "**Regression**",
    "unsupported": "**Not supported**: a factsheet's figures do not re-derive from its raw records",
    "inconclusive": "**Inconclusive**",
}


class DiffReport(Model):
    diff_version: DiffVersion = DIFF_VERSION
    kind: Literal["llm-factsheet-diff"] = "llm-factsheet-diff"
    old: str
    new: str
    old_sha256: str
    new_sha256: str
    verdict: Verdict = Field(
        description="regression; unsupported (either side's figures do not re-derive from its records: the "
        "baseline's as the candidate's); "
        "inconclusive (a row that decides was not compared, or not decided: busy host, no between-run "
        "noise; or no such row); no_regression (every row that decides compared and decided, none worse)."
    )
    verdict_reason: str = Field(description="the verdict in words")
    on_inconclusive: OnInconclusive = Field(
        DEFAULT_ON_INCONCLUSIVE,
        description="the gate an inconclusive verdict gives (the policy's `on_inconclusive`)",
    )
    on_inconclusive_source: str = Field("default", description="the policy that set it, or 'default'")
    gate: Literal["pass", "fail"] = Field(
        "fail",
        description="the exit code's verdict: pass (exit 0) on no_regression, and on "
        "inconclusive where on_inconclusive is pass; fail (exit 1) otherwise",
    )
    old_unsupported: list[Discrepancy] = Field(
        default_factory=list, description="figures of the old factsheet its raw records do not support"
    )
    new_unsupported: list[Discrepancy] = Field(
        default_factory=list, description="figures of the new factsheet its raw records do not support"
    )
    rule: str = (
        "a regression is a change for the worse that is beyond noise (the 95 % interval of new − old "
        "excludes 0; for shares, Fisher's exact p < 0.05) and beyond its limit, on a figure the factsheet "
        "claims: capacity at SLO, its confirmation run's page-1 figures (p99 E2EL, TTFT, TPOT, goodput, SLO "
        "attainment), pass@1; sweep points and a confirmation run's other figures are indicative; a row "
        "measured on a busy host is never a regression (not decided: busy host); a row decides only on "
        "between-run noise (both sides repeated, or the baseline's repeats; pass@1 over its fixed tasks), else "
        "it is not decided: no between-run noise; no_regression needs every row that decides compared and "
        "decided, else inconclusive, whose exit code the policy's on_inconclusive chooses"
    )
    noise_scope: str = Field(NOISE_SCOPE, description="what the noise intervals cover")
    limits: dict[str, Limit]
    figures: list[FigureDiff]
    deployment: list[DeploymentChange] = Field(
        default_factory=list,
        description=f"the deployment's facts old against new: {DEPLOYMENT_RULE}",
    )
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
            f"Gate: **{self.gate}** ({t(self.gate_words())}).",
            "",
            f"Noise: {t(self.noise_scope)}.",
            "",
            "| figure | scope | old | new | change | 95 % CI of change | limit | verdict |",
            "|---|---|---:|---:|---:|---|---:|---|",
        ]
        for f in self.figures:
            if f.status != "compared":
                lines.append(f"| {t(f.figure)} | {t(f.scope)} | | | | | | not comparable: {t(f.reason)} |")
                continue
            ci = f"[{_f(f.noise.lower)}, {_f(f.noise.upper)}]" if f.noise else MISSING
            rel = f" ({f.change_rel:+.1%})" if f.change_rel is not None else ""
            verdict = f"**{f.verdict_text()}**" if f.regression else f.verdict_text()
            if f.notes:
                verdict += f" ({'; '.join(f.notes)})"
            limit = f.limit.text() if f.limit else MISSING
            lines.append(
                f"| {t(f.figure)} | {t(f.scope)} | {t(f.value_text('old'))} | {t(f.value_text('new'))} | "
                f"{_f(f.change)}{rel} | {ci} | {t(limit)} | {t(verdict)} |"
            )
        return "\n".join(lines + self._deployment_lines()) + "\n"

    def gate_words(self) -> str:
        """Why the gate passes or fails, naming the on_inconclusive that applied."""
        if self.verdict == "no_regression":
            return "no regression"
        if self.verdict != "inconclusive":
            return self.verdict.replace("_", " ")
        return f"inconclusive, and on_inconclusive is {self.on_inconclusive} ({self.on_inconclusive_source})"

    def _deployment_lines(self) -> list[str]:
        if not self.deployment:
            return []
        t = markdown_text
        lines = [
            "",
            f"Deployment: {t(DEPLOYMENT_RULE)}.",
            "",
            "| fact | scope | old | new | status |",
            "|---|---|---|---|---|",
        ]
        for d in self.deployment:
            status = f"not comparable: {t(d.reason)}" if d.status == "not_comparable" else d.status
            if d.status == "changed":
                status = "**changed**"
            lines.append(f"| {t(d.fact)} | {t(d.scope)} | {t(d.old or '')} | {t(d.new or '')} | {status} |")
        return lines


def _f(v: float | None) -> str:
    return shown(v, ".4g")


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


@dataclass(frozen=True)
class _Row:
    """A row with the part of each sheet it rests on (its records must support it on both sides)."""

    figure: FigureDiff
    old_path: str | None
    new_path: str | None


def compare(
    old: Factsheet,
    old_path: Path,
    new: Factsheet,
    new_path: Path,
    limits: dict[str, Limit],
    supported: tuple[Support, Support] | None = None,
    on_inconclusive: tuple[OnInconclusive, str] = (DEFAULT_ON_INCONCLUSIVE, "default"),
) -> DiffReport:
    """`supported`: what each side's records support, when the caller has already re-derived these very
    sheets in their folders (the catalogue re-derives every build first; a diff would do it again).
    `on_inconclusive`: the gate an inconclusive verdict gives, and the policy that said so."""
    applied = parse_limits(DEFAULT_LIMITS, "default") | limits
    # Re-derived first: no row is compared on a figure its records do not give.
    if supported is None:
        supported = (support(old, old_path.parent), support(new, new_path.parent))
    sides = {"old": supported[0], "new": supported[1]}
    rows = (
        _capacity_rows(old, old_path, new, new_path)
        + _load_rows(old, old_path, new, new_path)
        + [
            _Row(f, "accuracy.result.pass_rates", "accuracy.result.pass_rates")
            for f in _accuracy_figures(old, new)
        ]
    )
    figures = [_supported(r, sides) for r in rows]
    between = _between_run_alpha(figures)
    for f in figures:
        _judge(f, applied.get(f.figure))
    verdict, why = _verdict(figures, sides)
    passes = verdict == "no_regression" or (verdict == "inconclusive" and on_inconclusive[0] == "pass")
    return DiffReport(
        old=str(old_path),
        new=str(new_path),
        old_sha256=_digest(old_path),
        new_sha256=_digest(new_path),
        verdict=verdict,
        verdict_reason=why,
        on_inconclusive=on_inconclusive[0],
        on_inconclusive_source=on_inconclusive[1],
        gate="pass" if passes else "fail",
        old_unsupported=[u.discrepancy for u in sides["old"].problems],
        new_unsupported=[u.discrepancy for u in sides["new"].problems],
        noise_scope=_noise_scope(between, _repeated(old), _repeated(new)),
        limits=applied,
        figures=figures,
        deployment=deployment_changes(old, new),
        generated_at=utc_now(),
        tool_version=tool_version(),
    )


def _repeated(sheet: Factsheet) -> bool:
    """Whether any capacity search of `sheet` repeated its headline run (spec `repeats`)."""
    return any(repeated(s.section, "") is not None for s in _searches(sheet).values())


def _noise_scope(between: int, old: bool, new: bool) -> str:
    """What the noise intervals cover, saying which side repeated when not both did."""
    if between:
        return NOISE_SCOPE_BETWEEN.format(m=between, family=FAMILY_ALPHA)
    if not old and not new:
        return NOISE_SCOPE
    within = "within-run only: every interval is the noise of one run's own samples"
    if old:
        why = (
            f"{'both factsheets' if new else 'the baseline'} repeated {'their' if new else 'its'} headline runs, "
            "but no figure of a repeated run was compared (the answers differ, or a side's repeated run is not "
            "its answer's)"
        )
    else:
        why = (
            "only the new factsheet repeated its headline runs (spec `repeats`); between-run variance needs the "
            "baseline's repeats"
        )
    return f"{within}. {why}, so a rebuild on the same host can move a figure further than these intervals"


def _between_run_alpha(figures: list[FigureDiff]) -> int:
    """Each between-run row's level: Bonferroni over the m rows decided by the repeats (a family-wise
    false-alarm rate of FAMILY_ALPHA); returns m."""
    rows = [
        f for f in figures if f.status == "compared" and f.old_repeats is not None and f.noise is not None
    ]
    checks = [f.capacity_check for f in figures if f.capacity_check is not None]
    m = sum(1 for f in rows if not f.indicative) + len(checks)  # an indicative row: same level, uncounted
    alpha = FAMILY_ALPHA / max(m, 1)
    for f in rows:
        test = _welch_noise if f.new_repeats is not None else _prediction_noise
        f.noise = test(f, alpha, m)
    for c in checks:
        # a probe's lower end is the candidate's one value: the prediction test is PROBE_METHOD's
        new = c.new_probe_lower if c.new_probe_lower is not None else float(np.mean(c.new_runs))
        at = FigureDiff(
            figure=c.figure, scope="", unit="ms", higher_is_better=False, status="compared",
            old=float(np.mean(c.old_repeats)), new=new, old_repeats=c.old_repeats,
            new_repeats=c.new_runs if len(c.new_runs) > 1 else None, old_within_half=c.old_within_half,
            new_within_half=c.new_within_half,
        )  # fmt: skip
        c.noise = (_welch_noise if at.new_repeats is not None else _prediction_noise)(at, alpha, m)
        c.worse = bool(c.noise.p_value is not None and c.noise.p_value < alpha and at.new > at.old)
    return m


SIDES = {"old": "baseline", "new": "candidate"}


def _verdict(figures: list[FigureDiff], sides: dict[str, Support]) -> tuple[Verdict, str]:
    # A side whose figures its records do not give is no evidence either way: a forged baseline would make
    # any candidate look as good as the forgery (issue 42), so the baseline is held to what the candidate is.
    forged = [f"the {SIDES[w]}'s figures are {reasons(s.problems)}" for w, s in sides.items() if s.problems]
    if forged:
        return "unsupported", "; ".join(forged)
    deciding = [f for f in figures if not f.indicative and f.decided_by is None]
    regressed = [f for f in deciding if f.regression]
    if regressed:
        return "regression", f"regression beyond noise and threshold: {_names(regressed)}"
    if not deciding:
        return "inconclusive", (
            f"no figure the gate decides on (capacity at SLO, its confirmation run, pass@1) in either factsheet; "
            f"{len(figures)} indicative sweep figure(s) reported, which never decide"
        )
    # no_regression only when every row that decides was compared and decided (issue 42 item 1, 41 item 1)
    open_rows = [
        (f"not decided, {why}", [f for f in deciding if f.not_decided == why]) for why in (BUSY, NO_BETWEEN)
    ] + [("not compared", [f for f in deciding if f.status != "compared"])]
    held = [f"{words}: {_names(rows)}" for words, rows in open_rows if rows]
    if held:
        n = sum(len(rows) for _, rows in open_rows)
        return (
            "inconclusive",
            f"{n} of the {len(deciding)} figure(s) the gate decides on open: {'; '.join(held)}",
        )
    indicative = len(figures) - len(deciding)
    why = f"all {len(deciding)} figure(s) the gate decides on compared and decided, none regressed"
    if indicative:
        why += f"; {indicative} indicative sweep figure(s) reported, which never decide"
    return "no_regression", why


def _names(rows: list[FigureDiff], most: int = 8) -> str:
    names = [f"{f.figure} ({f.scope})" for f in rows]
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _supported(row: _Row, sides: dict[str, Support]) -> FigureDiff:
    """The row, or not comparable when either side's records do not support what it rests on."""
    f = row.figure
    for which, path in (("old", row.old_path), ("new", row.new_path)):
        problems = sides[which].of(path) if path is not None else []
        if problems:
            return _nc(f.figure, f.scope, f"{which} factsheet: {reasons(problems, most=1)}")
    return f


def _digest(path: Path) -> str:
    try:
        return sha256_bytes(read_given(path, MAX_FACTSHEET_BYTES, "factsheet"))
    except OSError:
        return "unreadable"


def _judge(f: FigureDiff, limit: Limit | None) -> None:
    if f.status == "compared" and f.figure == CAPACITY:
        _judge_capacity(f, limit)
    if f.status != "compared" or f.old is None or f.new is None or f.figure == CAPACITY:
        return
    f.change = f.new - f.old
    f.change_rel = f.change / f.old if f.old else None
    worse = f.change < 0 if f.higher_is_better else f.change > 0
    if f.noise is not None and f.noise.p_value is not None:  # a test decides; its interval is shown
        f.beyond_noise = f.noise.p_value < (
            f.noise.alpha if f.noise.alpha is not None else 1 - NOISE_CONFIDENCE
        )
    elif f.noise is not None and (f.noise.lower is not None or f.noise.upper is not None):
        # An open end (too few samples for that side of an interval) cannot exclude 0 on that side.
        low, high = f.noise.lower, f.noise.upper
        f.beyond_noise = bool((low is not None and low > 0) or (high is not None and high < 0))
    f.limit = limit
    if limit is not None:
        size = abs(f.change_rel) if limit.relative and f.change_rel is not None else abs(f.change)
        f.beyond_limit = worse and size > limit.value
    _decide(f, f.worse_beyond)


def _decide(f: FigureDiff, worse: bool) -> None:
    """A row that decides regresses when worse; without between-run noise it is not decided whatever its
    change (a rebuild moves a figure further than one run's own noise: issue 41); on a busy host a worse row
    is not decided."""
    if f.indicative:
        return
    if not f.between_run:
        f.not_decided = NO_BETWEEN
        return
    if not worse:
        return
    if f.busy_host:
        f.not_decided = BUSY
    else:
        f.regression = True


def _judge_capacity(f: FigureDiff, limit: Limit | None) -> None:
    """Worse beyond noise: the new range lies wholly below the old one (new.high ≤ old.low, the capacity
    being below its high); a new search where no value passed has lost every value the old one had."""
    if f.old is not None and f.new is not None:
        f.change = f.new - f.old
        f.change_rel = f.change / f.old if f.old else None
    f.limit = limit
    if limit is not None and f.old is not None:
        if f.new is None:
            f.beyond_limit = True
        else:
            size = abs(f.change_rel) if limit.relative and f.change_rel is not None else abs(f.change)
            f.beyond_limit = f.change < 0 and size > limit.value
    worse = f.noise is not None and f.noise.upper is not None and f.noise.upper <= 0
    c = f.capacity_check
    if worse and c is not None and c.noise is not None:  # the fall, decided between-run at the load it failed
        worse = f.beyond_noise = bool(c.worse)
        old = f"{c.figure}: old {_f(float(np.mean(c.old_repeats)))} ms at {c.old_value:g}"
        if c.new_probe_lower is not None:
            new = f"new's probe ≥ {_f(c.new_probe_lower)} ms at {c.new_value:g} (its 95 % lower end)"
            test = f"{_f(c.noise.lower)} ms beyond old's prediction upper end at alpha {c.noise.alpha:.2g}"
        else:
            new = f"new {_f(float(np.mean(c.new_runs)))} ms at {c.new_value:g}"
            test = f"p {c.noise.p_value:.2g} against alpha {c.noise.alpha:.2g}"
        verdict = "worse beyond" if c.worse else "within"
        f.notes.append(f"{old}, {new}; {test}: {verdict} between-run noise")
    _decide(f, bool(worse and f.beyond_limit))


# system_prompts is part of what prompts_digest already covers (a chat-sessions script holds them).
_WORKLOAD_DESCRIPTION = {"profile", "generator_version", "parameters", "requests_digest", "system_prompts"}


def workload_key(e: LoadPointEntry) -> str:
    """What must be equal for two load points to be compared: the point as run and the prompts sent."""
    data = {
        "point": e.result.point.model_dump(mode="json"),
        # What identifies the prompts; the profile's description and the bodies' digest
        # (which names the served model) leave it out, so an older factsheet's synthetic points compare.
        "workload": e.result.workload.model_dump(mode="json", exclude=_WORKLOAD_DESCRIPTION),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


# --- capacity at SLO and its confirmation run -------------------------------------------------------------


@dataclass(frozen=True)
class _Search:
    """One capacity search of a sheet: its section, the shape every probe took, its path and what must
    match for two searches to be compared."""

    section: CapacitySection
    template: LoadPoint
    path: str
    key: str


def _searches(sheet: Factsheet) -> dict[str, _Search]:
    """Each capacity search by its scope, `capacity (<profile>)`."""
    if not isinstance(sheet.load, LoadSection):
        return {}
    load, out = sheet.load, {}
    if not isinstance(load.capacity, NotMeasured) and load.points:
        first = load.points[0].result
        workload = (
            first.workload.model_dump(mode="json", exclude=_WORKLOAD_DESCRIPTION) if first.workload else None
        )
        out[f"capacity ({load.profile()})"] = _search(load.capacity, first.point, "load.capacity", workload)
    for k, c in enumerate(load.compared_workloads):
        workload = c.workload.model_dump(mode="json")
        out.setdefault(
            f"capacity ({c.workload.profile})",
            _search(c.capacity, c.template, f"load.compared_workloads[{k}].capacity", workload),
        )
    return out


def _search(section: CapacitySection, template: LoadPoint, path: str, workload) -> _Search:
    r = section.result
    data = {
        "knob": r.knob,
        "slo": r.slo.model_dump(mode="json"),
        "min_attainment": r.min_attainment,
        "template": template.model_dump(mode="json"),
        "workload": workload,
    }
    return _Search(
        section, template, path, hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    )


def _capacity_rows(old: Factsheet, old_path: Path, new: Factsheet, new_path: Path) -> list[_Row]:
    a, b = _searches(old), _searches(new)
    out: list[_Row] = []
    for scope in list(a) + [s for s in b if s not in a]:
        o, n = a.get(scope), b.get(scope)
        if o is None or n is None:
            which = "old" if o is None else "new"
            out.append(
                _Row(_nc(CAPACITY, scope, f"capacity not searched in the {which} factsheet"), None, None)
            )
        elif o.key != n.key:
            why = "different search (knob, SLO, minimum attainment, request shape or prompts differ)"
            out.append(_Row(_nc(CAPACITY, scope, why), None, None))
        else:
            row = _capacity_row(scope, o.section, n.section)
            # each answer held over its k runs on both sides: a rebuild's noise, not one run's
            rep_o, rep_n = repeated(o.section, o.path), repeated(n.section, n.path)
            row.between_run = rep_o is not None and rep_n is not None
            if rep_o is not None and rep_n is not None:
                row.host_ratio = host_ratio([r.load for r in rep_o.runs], [r.load for r in rep_n.runs])
                row.notes += host_note(row.host_ratio, len(rep_o.runs), len(rep_n.runs))
                _fell(row, o, rep_o, n, rep_n)
            _host_notes([row], _loads(o.section, scope, o.path), _loads(n.section, scope, n.path))
            out.append(_Row(row, o.path, n.path))
            out += [
                _on_page_one(r) for r in _confirmation_rows(scope, o, old_path.parent, n, new_path.parent)
            ]
    return out


def _on_page_one(row: _Row) -> _Row:
    """A confirmation run's figure decides only where page 1 states its rebuild interval (OFF_PAGE_ONE)."""
    f = row.figure
    if f.figure not in REBUILD_FIGURES and not f.indicative:
        f.indicative = True
        f.notes.append(OFF_PAGE_ONE)
    return row


def _fell(row: FigureDiff, o: _Search, rep_o: Repeated, n: _Search, rep_n: Repeated) -> None:
    """A capacity worse by the ranges (the candidate's high at or below the baseline's low) with both sides
    repeated: the fall's evidence between-run (CAPACITY_CHECK_METHOD), or not decided when its high rests on
    a short probe; a high failed on the pass rule's other terms (errors, truncation, saturation) with its p99
    within the SLO is no latency noise and stays decided by the ranges."""
    if row.noise is None or row.noise.upper is None or row.noise.upper > 0:
        return
    ro, rn = o.section.result, n.section.result
    high = rn.range[1]
    if high is None:
        return
    old_at = ro.points[rep_o.index].value
    if old_at < high:
        _not_between(row, f"old: its repeats are at {old_at:g}, below the value new failed at ({high:g})")
        return
    metric = rn.slo.p99_metric
    threshold = getattr(rn.slo, metric)
    runs = (
        [r.metrics for r in rep_n.runs]
        if rn.points[rep_n.index].value == high
        else [p.metrics for p in rn.points if p.confirmation and p.value == high]
    )
    p99s = [getattr(m, metric).p(99) for m in runs]
    old_p99s = [getattr(r.metrics, metric).p(99) for r in rep_o.runs]
    figure = f"{metric}.p99"
    within = within_half([run_interval(figure, r.metrics) for r in rep_o.runs])
    if not runs:
        _probe_check(row, rn.points, high, figure, threshold, old_at, old_p99s, within)
        return
    if any(v is None for v in p99s + old_p99s):
        _not_between(row, f"a run at {old_at:g} or {high:g} states no {metric} p99")
        return
    if threshold is not None and all(v <= threshold for v in p99s):
        row.notes.append(
            f"new: its runs at {high:g} failed on the pass rule's other terms: decided by the ranges"
        )
        return
    row.capacity_check = CapacityCheck(
        figure=figure, old_value=old_at, new_value=high, old_repeats=old_p99s, new_runs=p99s,
        old_within_half=within, new_within_half=within_half([run_interval(figure, m) for m in runs]),
    )  # fmt: skip
    row.notes.append(
        f"the fall decided between-run: new's {figure} at {high:g} against old's {len(rep_o.runs)} repeats at "
        f"{old_at:g}"
    )


def _probe_check(row: FigureDiff, points: list[CapacityPoint], high: float, figure: str,
                 threshold: float | None, old_at: float, old_p99s: list[float | None],
                 within: float | None) -> None:  # fmt: skip
    """The fall when the candidate's high rests on short probes (PROBE_METHOD): their p99's lower end."""
    cis = [p.metrics.percentile_ci.get(figure) for p in points
           if not p.confirmation and not p.passed and p.value == high]  # fmt: skip
    lows = [ci.lower if ci is not None else None for ci in cis]
    old = [v for v in old_p99s if v is not None]
    if not lows or any(v is None for v in lows) or len(old) < len(old_p99s):
        _not_between(
            row, f"new: its range's high ({high:g}) rests on a short probe whose p99 has no lower end"
        )
        return
    low = min(v for v in lows if v is not None)
    if threshold is not None and low <= threshold:
        row.notes.append(
            f"new: its probe at {high:g} failed on the pass rule's other terms: decided by the ranges"
        )
        return
    row.capacity_check = CapacityCheck(figure=figure, old_value=old_at, new_value=high, old_repeats=old,
                                       new_runs=[], new_probe_lower=low, old_within_half=within)  # fmt: skip
    row.notes.append(
        f"the fall decided between-run: new's probe {figure} at {high:g} against old's {len(old)} repeats at "
        f"{old_at:g}"
    )


def _not_between(row: FigureDiff, why: str) -> None:
    row.between_run = False
    row.notes.append(f"{why}: the fall is not decided between-run")


def _loads(section: CapacitySection, scope: str, path: str) -> list[RunLoad]:
    return search_loads(section, scope, path) + repeat_loads(section, scope, path)


def _host_notes(figures: list[FigureDiff], old: list[RunLoad], new: list[RunLoad]) -> None:
    """A row whose runs were measured on a busy host says so (probes/hostload): its figures measure the
    host as much as the deployment."""
    notes = [n for n in (busy_note("old", old), busy_note("new", new)) if n]
    for f in figures:
        if f.status == "compared":
            f.notes += notes
            f.busy_host = bool(busy(old) or busy(new))


def _established(section: CapacitySection) -> tuple[float | None, float | None]:
    """(low, high): the capacity is at least low (its confirmed answer, else the range's clear pass) and
    below high (a probe that clearly failed); None: not established on that side."""
    r = section.result
    low = r.capacity if r.confirmed and r.capacity is not None else r.range[0]
    return low, r.range[1]


def _capacity_row(scope: str, o: CapacitySection, n: CapacitySection) -> FigureDiff:
    """Each side stated as page 1 states it (its headline figure, computed from the section), compared on
    what each establishes."""
    ro, rn = o.result, n.result
    (lo_o, hi_o), (lo_n, hi_n) = _established(o), _established(n)
    notes = [f"{which}: {capacity_figure(c, scope).words()}" for which, c in (("old", o), ("new", n))]
    worse = None if hi_n is None or lo_o is None else hi_n <= lo_o
    better = None if hi_o is None or lo_n is None else hi_o <= lo_n
    beyond = None if worse is None and better is None else bool(worse or better)
    lower = None if lo_n is None or hi_o is None else lo_n - hi_o
    upper = None if hi_n is None or lo_o is None else hi_n - lo_o
    return FigureDiff(
        figure=CAPACITY, scope=scope, unit="concurrent users" if ro.knob == "concurrency" else "req/s",
        higher_is_better=True, status="compared", old=ro.capacity, new=rn.capacity,
        old_lower_bound=ro.capacity is not None and ro.bracket[1] is None,
        new_lower_bound=rn.capacity is not None and rn.bracket[1] is None,
        noise=Noise(method=CAPACITY_METHOD, lower=lower, upper=upper), beyond_noise=beyond, notes=notes,
    )  # fmt: skip


def _answer(section: CapacitySection) -> int | None:
    """Index of the confirmation run that passed at the answer; None without one."""
    r = section.result
    if r.confirmed is not True:
        return None
    return next(
        (i for i in reversed(range(len(r.points))) if r.points[i].confirmation and r.points[i].passed
         and r.points[i].value == r.capacity),
        None,
    )  # fmt: skip


def _repeated_at_one_load(o: _Search, n: _Search) -> tuple[int, int] | None:
    """The baseline's repeated run and the candidate's page-1 run (its repeated run, else its last
    confirmation), when at the same load: (old index, new index) in result.points. The baseline's repeats
    carry between-run noise (with the candidate's, Welch; alone, their prediction interval), whether or not
    the value held as the answer (REPEATS_RULE)."""
    a = repeated(o.section, o.path)
    if a is None:
        return None
    b = repeated(n.section, n.path)
    confirmations = [i for i, p in enumerate(n.section.result.points) if p.confirmation]
    i_n = b.index if b is not None else (confirmations[-1] if confirmations else None)
    if i_n is None:
        return None
    same = o.section.result.points[a.index].value == n.section.result.points[i_n].value
    return (a.index, i_n) if same else None


def _confirmation_rows(scope: str, o: _Search, old_folder: Path, n: _Search, new_folder: Path) -> list[_Row]:
    names = _run_names()
    ro, rn = o.section.result, n.section.result
    label = f"{scope} confirmation"
    both = _repeated_at_one_load(o, n)
    if both is not None:
        io, i_n = both
        value = ro.points[io].value
        label = f"{scope} confirmation, {ro.knob} {value:g}"
    else:
        io, i_n = _answer(o.section), _answer(n.section)
        if io is None or i_n is None:
            which = "old" if io is None else "new"
            return [
                _Row(_nc(x, label, f"no confirmed answer in the {which} factsheet"), None, None)
                for x in names
            ]
        if ro.capacity != rn.capacity:
            why = f"the answers differ ({ro.capacity:g} vs {rn.capacity:g}): runs at different loads; capacity compared above"
            rows = [_nc(x, label, why).model_copy(update={"decided_by": CAPACITY}) for x in names]
            return [_Row(row, None, None) for row in rows]
        label = f"{scope} confirmation, {ro.knob} {ro.capacity:g}"

    def records(s: _Search, i: int, folder: Path) -> PointRecords:
        r = s.section.result
        return PointRecords(
            s.section.records[i], knob_point(s.template, r.knob, r.points[i].value), r.slo, folder
        )

    figures = _run_figures(
        label, ro.points[io].metrics, records(o, io, old_folder), rn.points[i_n].metrics,
        records(n, i_n, new_folder), indicative=False,
    )  # fmt: skip
    rep_o, rep_n = _repeats_of(o, io), _repeats_of(n, i_n)
    loads_o = search_loads(o.section, scope, o.path)[io : io + 1]
    loads_n = search_loads(n.section, scope, n.path)[i_n : i_n + 1]
    if rep_o is not None:
        one = None if rep_n is not None else rn.points[i_n].metrics
        loads_new = [r.load for r in rep_n.runs] if rep_n is not None else [host_load_at(n.section, i_n)]
        ratio = host_ratio([r.load for r in rep_o.runs], loads_new)
        figures = [_between(f, rep_o, rep_n, one, ratio) for f in figures]
        loads_o += repeat_loads(o.section, scope, o.path)
        if rep_n is not None:
            loads_n += repeat_loads(n.section, scope, n.path)
    else:
        which = [w for w, r in (("old", rep_o), ("new", rep_n)) if r is None]
        for f in figures:
            if f.status == "compared":
                f.notes.append(
                    f"within-run noise only: the {' and '.join(which)} side did not repeat this run"
                )
    _host_notes(figures, loads_o, loads_n)
    return [_Row(f, o.path, n.path) for f in figures]


def _repeats_of(s: _Search, i: int) -> Repeated | None:
    """The repeats of a search's confirmation run `i` (its answer's), when that run was the one repeated."""
    rep = repeated(s.section, s.path)
    return rep if rep is not None and rep.index == i else None


def _run_value(name: str, m: LoadMetrics) -> float | None:
    """One of `_run_names()` read from a run's metrics."""
    if name == "goodput":
        return m.goodput
    if name == "slo_attainment":
        return m.slo_attainment
    metric, q = name.rsplit(".p", 1)
    return getattr(m, metric).p(float(q))


def _between(
    f: FigureDiff, old: Repeated, new: Repeated | None, one: LoadMetrics | None, ratio: float | None
) -> FigureDiff:
    """A confirmation row decided by between-run variance: old is the mean of the baseline's repeats; new the
    mean of the candidate's (Welch) or, without them, its one run `one` (the baseline's prediction interval);
    the level is set once every such row is known (`_between_run_alpha`). A percentile too few samples support
    within one run is decided so too: the repeats' spread is that figure's rebuild noise, as page 1's rebuild
    interval states it; a row not comparable for another reason stays so. `ratio`: the two sides' host speeds,
    noted (factsheet/compliance/host_speed.py)."""
    if f.status != "compared" and not f.too_few_samples:
        return f
    a = [_run_value(f.figure, r.metrics) for r in old.runs]
    b = (
        [_run_value(f.figure, r.metrics) for r in new.runs]
        if new is not None
        else [_run_value(f.figure, one)]
    )
    if any(v is None for v in a + b):
        return f
    noise = Noise(method="between-run, level set below", lower=None, upper=None)
    half_o = within_half([run_interval(f.figure, r.metrics) for r in old.runs])
    half_n = within_half([run_interval(f.figure, r.metrics) for r in new.runs]) if new is not None else None
    notes = [*f.notes, *host_note(ratio, len(a), len(b))]
    if f.too_few_samples:
        notes.append(f"each run's {f.figure} rests on fewer samples than bound it within one run: decided by "
                     "the repeats' spread alone")  # fmt: skip
    notes.append(
        f"old and new: the mean of {len(a)} and {len(b)} repeats" if new is not None
        else f"old: the mean of the baseline's {len(a)} repeats; new: the candidate's one run"
    )  # fmt: skip
    percentile = f.figure not in ("goodput", "slo_attainment")
    unit = "ms" if percentile else ("req/s" if f.figure == "goodput" else "share")
    return f.model_copy(update={
        "status": "compared", "reason": None, "unit": unit, "higher_is_better": not percentile,
        "old": float(np.mean(a)), "new": float(np.mean(b)), "old_repeats": a,
        "new_repeats": b if new is not None else None, "noise": noise, "notes": notes, "between_run": True,
        "host_ratio": ratio, "old_within_half": half_o, "new_within_half": half_n,
    })  # fmt: skip


def _spread(values: list[float], half: float | None) -> float:
    """The sample sd of one side's repeats, no less than their within-run half-width allows (SPREAD_FLOOR)."""
    s = float(np.std(values, ddof=1))
    return max(s, half / t_quantile(len(values) - 1)) if half is not None else s


def _prediction_noise(f: FigureDiff, alpha: float, m: int) -> Noise:
    """The candidate's one run against the baseline's repeats: the normal-theory prediction test at alpha, and
    the (1 − alpha) interval of new − mean(old)."""
    # deferred: importing scipy.stats costs every command ~0.7 s of CPU at its start
    from scipy.stats import t as student_t

    a, k = f.old_repeats, len(f.old_repeats)
    d = float(f.new - np.mean(a))
    scale = _spread(a, f.old_within_half) * math.sqrt(1 + 1 / k)
    method = PREDICTION_METHOD.format(family=FAMILY_ALPHA, m=m)
    if scale == 0:  # k identical runs, no within-run interval: any difference is beyond noise
        return Noise(method=method, lower=d, upper=d, p_value=0.0 if d != 0 else 1.0, alpha=alpha)
    p = float(2 * student_t.sf(abs(d) / scale, k - 1))
    half = float(student_t.ppf(1 - alpha / 2, k - 1)) * scale
    return Noise(method=method, lower=d - half, upper=d + half, p_value=p, alpha=alpha)


def _welch_noise(f: FigureDiff, alpha: float, m: int) -> Noise:
    """Welch's test and (1 − alpha) interval of mean(new) − mean(old) over the row's repeats."""
    # deferred: importing scipy.stats costs every command ~0.7 s of CPU at its start
    from scipy.stats import t as student_t

    a, b = f.old_repeats, f.new_repeats
    d = float(np.mean(b) - np.mean(a))
    va, vb = _spread(a, f.old_within_half) ** 2 / len(a), _spread(b, f.new_within_half) ** 2 / len(b)
    se = math.sqrt(va + vb)
    method = WELCH_METHOD.format(family=FAMILY_ALPHA, m=m)
    if se == 0:  # both sides constant, no within-run interval: any difference is beyond noise
        p = 0.0 if d != 0 else 1.0
        return Noise(method=method, lower=d, upper=d, p_value=p, alpha=alpha)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    p = float(2 * student_t.sf(abs(d) / se, df))
    half = float(student_t.ppf(1 - alpha / 2, df)) * se
    return Noise(method=method, lower=d - half, upper=d + half, p_value=p, alpha=alpha)


# --- the sweep's load points (indicative) and the figures of one run --------------------------------------


def _run_names() -> list[str]:
    return [f"{m}.p{q}" for m in LATENCY_METRICS for q in PERCENTILES] + ["goodput", "slo_attainment"]


def _load_rows(old: Factsheet, old_path: Path, new: Factsheet, new_path: Path) -> list[_Row]:
    names = _run_names()
    if not isinstance(old.load, LoadSection) or not isinstance(new.load, LoadSection):
        which = "old" if not isinstance(old.load, LoadSection) else "new"
        return [
            _Row(_nc(n, "load", f"load not measured in the {which} factsheet"), None, None) for n in names
        ]
    old_recs, new_recs = load_point_records(old, old_path.parent), load_point_records(new, new_path.parent)
    old_at = {e.result.label: (i, e) for i, e in enumerate(old.load.points)}
    out: list[_Row] = []
    for j, e in enumerate(new.load.points):
        label = e.result.label
        i, o = old_at.pop(label, (None, None))
        if o is None:
            out += [_Row(_nc(n, label, "no such load point in the old factsheet"), None, None) for n in names]
        elif workload_key(o) != workload_key(e):
            why = "different workload (point settings or prompts digest differ)"
            out += [_Row(_nc(n, label, why), None, None) for n in names]
        else:
            figures = _run_figures(label, o.result.metrics, old_recs[label], e.result.metrics, new_recs[label],
                                   indicative=True)  # fmt: skip
            _host_notes(figures, [RunLoad(label, "", o.host_load)], [RunLoad(label, "", e.host_load)])
            out += [_Row(f, f"load.points[{i}]", f"load.points[{j}]") for f in figures]
    for label in old_at:
        out += [_Row(_nc(n, label, "no such load point in the new factsheet"), None, None) for n in names]
    return out


def _nc(figure: str, scope: str, reason: str) -> FigureDiff:
    return FigureDiff(
        figure=figure,
        scope=scope,
        unit="",
        higher_is_better=figure in ("goodput", "slo_attainment", "pass@1", CAPACITY),
        status="not_comparable",
        reason=reason,
    )


def _run_figures(label, mo: LoadMetrics, ro: PointRecords, mn: LoadMetrics, rn: PointRecords, *, indicative):
    """One run's figures on both sides (a sweep point or a confirmation run), from the raw records."""
    out = []
    for rec, which in ((ro, "old"), (rn, "new")):
        status = rec.check().status
        if status != "verified":
            why = f"raw records of the {which} factsheet {status} ({rec.file.path})"
            return [_nc(x, label, why) for x in _run_names()]
    for m in LATENCY_METRICS:
        a, b = np.asarray(ro.samples(m), dtype=float), np.asarray(rn.samples(m), dtype=float)
        out += [_percentile(f"{m}.p{q}", label, a, b, q) for q in PERCENTILES]
    if mo.slo != mn.slo or mo.goodput is None or mn.goodput is None:
        why = "different SLOs" if mo.slo != mn.slo else "no SLO threshold, so no goodput"
        out += [_nc("goodput", label, why), _nc("slo_attainment", label, why)]
    else:
        (good_o, meas_o), (good_n, meas_n) = ro.good_counts(), rn.good_counts()  # recounted from raw records
        out.append(_rate_diff("goodput", label, good_o, mo.duration_s, good_n, mn.duration_s, meas_o, meas_n))
        out.append(_two_proportion("slo_attainment", label, "share", good_o, meas_o, good_n, meas_n))
    for f in out:
        f.indicative = indicative
    return out


def _percentile(name: str, scope: str, a: np.ndarray, b: np.ndarray, q: float) -> FigureDiff:
    """p{q} of both sides, compared only where both samples support it; noise from order statistics."""
    need = min_samples(q, 0, SUFFICIENCY_CONFIDENCE)
    if a.size < need or b.size < need:
        why = (
            f"too few samples ({a.size} old, {b.size} new; a p{q:g} needs ≥ {need}: MLPerf early stopping "
            f"at {SUFFICIENCY_CONFIDENCE:.0%})"
        )
        return _nc(name, scope, why).model_copy(update={"too_few_samples": True})
    ca, cb = quantile_ci(a, q, SIDE_CONFIDENCE), quantile_ci(b, q, SIDE_CONFIDENCE)
    lower = None if cb.lower is None or ca.upper is None else cb.lower - ca.upper
    upper = None if cb.upper is None or ca.lower is None else cb.upper - ca.lower
    return FigureDiff(
        figure=name, scope=scope, unit="ms", higher_is_better=False, status="compared",
        old=ca.estimate, new=cb.estimate, n_old=int(a.size), n_new=int(b.size),
        noise=Noise(method=QUANTILE_METHOD, lower=lower, upper=upper),
    )  # fmt: skip


def _rate_diff(figure, scope, k1, t1, k2, t2, n1, n2) -> FigureDiff:
    """Good completions per second of window, compared as two Poisson rates (normal approximation)."""
    # deferred: importing scipy.stats costs every command ~0.7 s of CPU at its start
    from scipy.stats import norm

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


def _two_proportion(figure, scope, unit, k1, n1, k2, n2) -> FigureDiff:
    """Two shares: Fisher's exact test decides (valid at any n); the Newcombe hybrid score interval of the
    difference is shown (a Wald interval collapses to zero width at 0 % or 100 %)."""
    # deferred: importing scipy.stats costs every command ~0.7 s of CPU at its start
    from scipy.stats import binomtest, fisher_exact

    if not n1 or not n2:
        return _nc(figure, scope, "no trials in one of the factsheets")
    p1, p2 = k1 / n1, k2 / n2
    p_value = float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)
    w1 = binomtest(k1, n1).proportion_ci(NOISE_CONFIDENCE, method="wilson")
    w2 = binomtest(k2, n2).proportion_ci(NOISE_CONFIDENCE, method="wilson")
    d = p2 - p1
    lo = d - math.hypot(p2 - w2.low, w1.high - p1)
    hi = d + math.hypot(w2.high - p2, p1 - w1.low)
    return FigureDiff(
        figure=figure, scope=scope, unit=unit, higher_is_better=True, status="compared",
        old=p1, new=p2, n_old=n1, n_new=n2,
        noise=Noise(method=PROPORTION_METHOD, lower=lo, upper=hi, p_value=p_value),
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
    row = _two_proportion(
        "pass@1", "accuracy", "fraction of tasks", round(ra["pass@1"] * na), na, round(rb["pass@1"] * nb), nb
    )
    if row.status == "compared":
        row.between_run = True
        row.notes.append(SHARE_OVER_TASKS)
    return [row]


def write_diff(report: DiffReport, out_dir: Path) -> list[Path]:
    """diff.json (the record), diff.md and diff.html through the one document renderer, written as a set."""
    # deferred: `factsheet schema` imports this module for DiffReport alone and needs no renderer.
    from factsheet.render import check_folder, page, write_set

    out_dir = check_folder(out_dir)
    html = page("diff.html.j2", report=report, indicative=INDICATIVE)
    return write_set(
        [
            (out_dir / DIFF_JSON, report.model_dump_json(indent=2).encode()),
            (out_dir / DIFF_MARKDOWN, report.markdown().encode()),
            (out_dir / DIFF_HTML, html.encode()),
        ]
    )
