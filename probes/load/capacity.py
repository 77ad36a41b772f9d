"""Capacity at SLO: the largest request rate (or concurrency) at which the SLO's p99 holds.

Search: start at a value, double while the point passes, halve while it fails, then bisect the
bracket [highest pass, lowest fail] to a relative tolerance. Every probed point is kept.

Search probes are short, so their p99s are indicative. A confirmation run (when asked) then measures
the answer with enough requests for its p99 claim (MLPerf early stopping); if it fails, the answer steps
down and is confirmed again: by one (concurrency) or to the next lower passing probe (rate), or, with
`confirm_step="bisect"`, to the middle between the failed value and the highest value still passing below it
(a long run is more demanding than a short probe — its p99 rests on more samples, and a chat session's later
turns carry longer histories — so a probe's pass can sit far above what a long run holds, and stepping by one
may spend every confirmation before reaching it). The answer carries its uncertainty: the range of values the probes cannot
tell apart at 95 % (from each probe's p99 interval), which two builds on the same host should share.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from pydantic import ConfigDict, Field

from probes.core.errors import InputError
from probes.core.isolation import Isolation
from probes.core.measurement import Model, NotMeasured
from probes.load.metrics import LoadMetrics
from probes.load.point import SLO, LoadPoint
from probes.load.runner import PointResult, Progress, run_point
from probes.load.workers.check import ClientCheck
from probes.load.workloads.profiles import WorkloadProfile, turns_per_user
from probes.server_view import Saturation, ServerView

Knob = Literal["rate", "concurrency"]
# How the search finds its upper end and confirms (stated on every result's `search`, so validate replays the rule
# the build ran: a document that states none ran "capped"). capped (the only rule of older builds): doubling up to max_value,
# stopping at the first failure. bracketing: doubling until a clear fail (SEARCH_METHODS), with
# max_value an optional cap, and each confirmation step confirm_runs runs, a failed one stepping down.
SearchRule = Literal["capped", "bracketing"]

# The search's defaults, here only: the build spec's `load.capacity` section takes them from here.
DEFAULT_START = 1.0
DEFAULT_MAX_VALUE = 64.0
DEFAULT_TOLERANCE = 0.05
DEFAULT_MAX_POINTS = 8
DEFAULT_MAX_CONFIRMATIONS = 2
ConfirmStep = Literal["one", "bisect", "bisect-long"]
CONFIRM_STEP_WORDS = {
    "one": "a failed confirmation steps down by one (concurrency) or to the next lower passing probe (rate)",
    "bisect": "a failed confirmation steps down to the middle between the failed value and the highest value "
    "still passing below it (concurrency rounded down; at adjacent values, that value itself)",
    # A long run failing outright says the short probes passing just below it are not evidence (five demo
    # rebuilds: chat sessions confirmed at 15 failed, then at 14, where a probe had passed, and the answer
    # stayed unconfirmed); one failing after runs at its value passed says the value is marginal, and the
    # probes below it still are (a demo build: 24 held twice, failed once; halving to the lowest probe, 4,
    # confirmed 14 where 20 holds).
    "bisect-long": "a failed confirmation steps down to the middle between the failed value and the highest "
    "value a long run (a confirmation or a repeat) passed below it; where none did, the highest value a probe "
    "passed below it when a long run at the failed value passed (the step failed in a later run: the value is "
    "marginal), else the lowest value a probe passed (concurrency rounded down; at adjacent values, that value "
    "itself)",
}
# A point with more failed requests than this fraction of those measured fails (failures are violations).
MAX_FAILED_FRACTION = 0.01

SEARCH_METHOD = (
    "doubling from the start value while the point passes (halving while it fails), then bisection of "
    "[highest pass, lowest fail] until its width ≤ tolerance × highest pass (concurrency: width 1)"
)
BRACKETING_METHOD = (
    "doubling from the start value until a clear fail (the 95 % interval of its p99 wholly above the "
    f"threshold, or > {MAX_FAILED_FRACTION * 100:g} % of requests failed) or the cap (max_value, when one is "
    "set), halving while the start fails; then bisection of [highest pass, lowest fail] until its width ≤ "
    "tolerance × highest pass (concurrency: width 1) or the points run out. Each confirmation step is "
    "confirm_runs long runs at one value, each after the first following an isolation; the step holds only "
    "if every run passes, and a failed run ends the step and the answer steps down (confirm_step) and is "
    "confirmed again"
)
SEARCH_METHODS: dict[str, str] = {"capped": SEARCH_METHOD, "bracketing": BRACKETING_METHOD}
RANGE_METHOD = (
    "low: the largest probed value that passed with the 95 % interval of its p99 wholly within the "
    "threshold; high: the smallest probed value that failed with that interval wholly above it (or with "
    f"> {MAX_FAILED_FRACTION * 100:g} % of requests failed). The capacity is ≥ low and < high; values in between are not told apart "
    "by the probes (None: no probe was that clear)"
)
ANSWER_RULE = (
    "the answer is the highest value whose last run passed; once long runs (confirmations, repeats) are made, "
    "the highest value whose long runs all held, or where none held, the highest value passed below every "
    "long run that failed: a short probe's pass never outranks a long run's verdict"
)
REPEATS_RULE = (
    "with repeats (the build spec's capacity.repeats: k ≥ 3), the last confirmation's value "
    "holds only when all k of its runs passed the pass rule; when one failed, the answer falls to the highest "
    "other value whose last run passed (no further run is made), not confirmed; in the range, a value with a "
    "failed repeat is no clear pass, and a value whose runs disagree no clear fail"
)
STEP_REPEATS_RULE = (
    "with repeats (the build spec's capacity.repeats: k ≥ 3) under search rule bracketing: "
    "each confirmation step is k runs at one value, each after the first following an isolation; a value holds "
    "only when all k runs passed the pass rule, a failed run ends its step (its runs stay among the points) and "
    "the answer steps down and is confirmed again; the runs of the step that held are the headline run's repeats"
)
# Why a run's event-loop lag does not decide its verdict: the lag rule's resolution is 5 % of the run's smallest
# latency figure, and a sampler's 1–2 ms lag on a quiet host is 5 % of a 20–40 ms TTFT, a GPU server's: every
# probe of a fast deployment would fail on the sampler's own noise (a mock at TTFT 20 ms: lag p99 2.4 ms, no
# capacity found). A lag delays stamps, so it inflates a latency (a false fail, never a false pass of the
# threshold); a stall long enough to hold back a closed loop's load is flagged on the run it happened in.
PASS_RULE = (
    f"p99 of the SLO's p99 metric ≤ its threshold, failed requests ≤ {MAX_FAILED_FRACTION * 100:g} % of measured "
    f"(a failure is a violation), truncated replies ≤ {MAX_FAILED_FRACTION * 100:g} % of measured, attainment ≥ min_attainment when given, the run not client-bound by the "
    "arrivals rule (an open loop's sends kept to its schedule), and not over-saturated (its waiting queue or "
    "TTFT growing without bound: probes/server_view/saturation.py); each run's client check, with its "
    "event-loop lag, is stated beside the verdict (`client`) and flagged where client-bound, not judged"
)


class CapacityError(InputError):
    """A capacity search that cannot run: bad bounds, or an SLO without the threshold it checks."""


class _Measured(Protocol):
    metrics: LoadMetrics


class CapacityPoint(Model):
    value: float
    passed: bool
    reasons: list[str] = Field(description="why the point failed; empty when it passed")
    p99_ms: float | None
    slo_attainment: float | None
    sufficient_samples: bool | None = Field(description="p99 backed by MLPerf early stopping's n")
    confirmation: bool = Field(
        False, description="a confirmation run of the answer (long), not a search probe"
    )
    metrics: LoadMetrics
    server_view: ServerView | NotMeasured | None = Field(None, description="the server view over the run")
    saturation: Saturation | None = Field(None, description="the saturation test")
    stopped_early: str | None = Field(None, description="why the run stopped before its count (saturated)")
    client: ClientCheck | None = Field(
        None,
        description="the run's client check (validate recomputes it but for the loop lag, "
        "which is not in the records): stated and flagged beside the verdict, not part of it",
    )
    isolation: Isolation | None = Field(
        None,
        description="a further run of a confirmation step (search rule bracketing): what "
        "separated it from the run before it (None: the step's first run, or a search probe)",
    )


class CapacitySearch(Model):
    """The search's parameters: with the probed points' records they determine the whole result."""

    # find_capacity takes them whole: the build derives them from its spec, `factsheet validate` replays the
    # search with those the factsheet states (the docstring is the schema's description: kept as published).
    model_config = ConfigDict(extra="forbid", frozen=True)

    start: float
    max_value: float | None = Field(
        description="the cap: the largest value probed (None: no cap, search rule bracketing only)"
    )
    min_value: float = Field(description="the floor the search halves down to")
    tolerance: float
    max_points: int
    max_confirmations: int
    confirm_step: ConfirmStep = Field(
        "one", description="how a failed confirmation steps down (CONFIRM_STEP_WORDS)"
    )
    rule: SearchRule = Field(
        "capped",
        description="how the upper end is found and the answer confirmed (SEARCH_METHODS)",
    )
    confirm_runs: int = Field(
        1,
        ge=1,
        description="runs per confirmation step (search rule bracketing: the spec's repeats)",
    )

    @classmethod
    def for_knob(
        cls,
        knob: Knob,
        *,
        start: float = DEFAULT_START,
        max_value: float | None = DEFAULT_MAX_VALUE,
        min_value: float | None = None,
        tolerance: float = DEFAULT_TOLERANCE,
        max_points: int = DEFAULT_MAX_POINTS,
        max_confirmations: int = DEFAULT_MAX_CONFIRMATIONS,
        confirm_step: ConfirmStep = "one",
        rule: SearchRule = "capped",
        confirm_runs: int = 1,
    ) -> CapacitySearch:
        """A search of `knob` with the defaults where not told; the floor, unless given, is one user
        (concurrency) or start / 64, six halvings below the start (rate)."""
        floor = min_value if min_value is not None else (1.0 if knob == "concurrency" else start / 64)
        return cls(
            start=start,
            max_value=max_value,
            min_value=floor,
            tolerance=tolerance,
            max_points=max_points,
            max_confirmations=max_confirmations,
            confirm_step=confirm_step,
            rule=rule,
            confirm_runs=confirm_runs,
        )


class CapacityResult(Model):
    knob: Knob
    method: str = SEARCH_METHOD
    pass_rule: str = PASS_RULE
    slo: SLO
    min_attainment: float | None
    capacity: float | None = Field(description="highest passing value; None when no probed value passed")
    bracket: tuple[float | None, float | None] = Field(description="(highest pass, lowest fail)")
    points: list[CapacityPoint] = Field(description="every probed point, in probing order")
    stop_reason: str
    insufficient_samples: bool = Field(description="the capacity point's p99 rests on too few samples")
    confirmed: bool | None = Field(
        None, description="a confirmation run at the answer passed (None: no confirmation asked or possible)"
    )
    range: tuple[float | None, float | None] = Field(
        (None, None), description="(low, high): the capacity is ≥ low and < high (see range_method)"
    )
    range_method: str = RANGE_METHOD
    search: CapacitySearch | None = Field(
        None,
        description="start, bounds, tolerance and budgets, so the search can be replayed",
    )


def point_runner(
    base_url: str, model: str, template: LoadPoint, slo: SLO, *, knob: Knob = "rate", **run_kw
) -> Callable[[float], PointResult]:
    """A `run(value)` for `find_capacity` that runs `template` at that rate (open loop) or
    concurrency (closed loop) against a server, from synchronous code (one event loop per point)."""

    def run(value: float, progress: Progress | None = None) -> PointResult:
        point = knob_point(template, knob, value)
        return asyncio.run(run_point(base_url, model, point, slo, progress=progress, **run_kw))

    return run


def knob_point(template: LoadPoint, knob: Knob, value: float) -> LoadPoint:
    """`template` at that rate (open loop) or concurrency (closed loop)."""
    shape = template.model_dump(exclude={"mode", "concurrency", "rate"})
    load = {"rate": value} if knob == "rate" else {"concurrency": int(value)}
    return LoadPoint.at(**shape, **load)


def warm_up_point(
    template: LoadPoint, knob: Knob, value: float, seed: int, profile: WorkloadProfile | None = None
) -> LoadPoint:
    """The warm-up round before a run at `value` (probes/core/isolation.py WARM_UP_RULE): the run's shape at its
    load, a user's turns each (closed loop: one request, or a whole chat session, `turns_per_user`) or one
    second of arrivals (open loop), none left out of its window."""
    point = knob_point(template, knob, value)
    n = turns_per_user(profile) * point.concurrency if knob == "concurrency" else max(1, math.ceil(value))
    update = {
        "num_requests": n,
        "warmup_requests": 0,
        "cooldown_requests": 0,
        "duration_s": None,
        "seed": seed,
    }
    return point.model_copy(update=update)


def judge_point(
    value: float, result: _Measured, min_attainment: float | None, confirmation: bool = False
) -> CapacityPoint:
    """One probed point with its verdict (the search and `factsheet validate` both judge through this)."""
    m = result.metrics
    arrivals = getattr(result, "arrivals", None)
    client = getattr(result, "client", None)
    saturation = getattr(result, "saturation", None)
    saturated = bool(saturation and saturation.over_saturated)
    reasons = judge(m, min_attainment, bool(arrivals and arrivals.client_bound), saturated)
    check = m.p99_check
    return CapacityPoint(
        value=value,
        passed=not reasons,
        reasons=reasons,
        p99_ms=check.p99_ms if check else None,
        slo_attainment=m.slo_attainment,
        sufficient_samples=check.sufficiency.sufficient if check and check.sufficiency else None,
        confirmation=confirmation,
        metrics=m,
        server_view=getattr(result, "server_view", None),
        saturation=saturation,
        stopped_early=getattr(result, "aborted", None)
        if getattr(result, "stop_reason", None) == "saturated"
        else None,
        client=client,
        isolation=getattr(result, "isolation", None),
    )


def judge(
    metrics: LoadMetrics,
    min_attainment: float | None,
    client_bound: bool = False,
    saturated: bool = False,
) -> list[str]:
    """Reasons a point fails the SLO (empty: it passes). `client_bound`: the arrivals rule's verdict (the
    run's client check is stated beside it, not judged: see PASS_RULE)."""
    reasons = []
    check = metrics.p99_check
    if check is None or check.met is None:
        reasons.append("nothing completed: no p99")
    elif not check.met:
        reasons.append(f"{check.metric} p99 {check.p99_ms:.4g} ms > {check.threshold_ms:g} ms")
    if metrics.measured and metrics.failed > MAX_FAILED_FRACTION * metrics.measured:
        reasons.append(f"{metrics.failed} of {metrics.measured} requests failed")
    # A reply cut short is no pass either (records.OUTCOME_RULE; an older run counted none).
    if metrics.measured and metrics.truncated > MAX_FAILED_FRACTION * metrics.measured:
        reasons.append(f"{metrics.truncated} of {metrics.measured} replies truncated")
    if min_attainment is not None and (metrics.slo_attainment or 0.0) < min_attainment:
        reasons.append(f"attainment {metrics.slo_attainment} < {min_attainment:g}")
    if client_bound:
        reasons.append("client-bound: the client's own delay could move the figures")
    if saturated:
        reasons.append("over-saturated: its waiting queue or TTFT grows without bound over the run")
    return reasons


def find_capacity(
    run: Callable[[float], _Measured],
    slo: SLO,
    search: CapacitySearch,
    *,
    knob: Knob = "rate",
    min_attainment: float | None = None,
    confirm: Callable[[float], _Measured] | None = None,
) -> CapacityResult:
    """`run(value)` runs one point (rate in req/s or concurrency) and returns its result; `confirm(value)`,
    when given, runs the long confirmation of an answer (at most `search.max_confirmations`, stepping down).
    `search` (start, bounds, tolerance, budgets) is stated on the result as given, so it can be replayed;
    the knob and `min_attainment` are the result's own fields."""
    return search_capacity(run, slo, search, knob=knob, min_attainment=min_attainment, confirm=confirm)[0]


def search_capacity(
    run: Callable[[float], _Measured],
    slo: SLO,
    search: CapacitySearch,
    *,
    knob: Knob = "rate",
    min_attainment: float | None = None,
    confirm: Callable[[float], _Measured] | None = None,
    repeat: Callable[[float], _Measured | CapacityPoint] | None = None,
    more: Callable[[int, float], bool] | None = None,
) -> tuple[CapacityResult, list[CapacityPoint]]:
    """find_capacity, with `repeat(value)` for the further runs of a confirmation step (search rule bracketing,
    `search.confirm_runs` > 1; it isolates the run from the one before). Returns the result and the further
    runs of the step that held (the headline run's repeats: empty when none held); a failed step's runs are
    among the result's points. `repeat` may return a judged point (validate's replay of stated runs).
    `more(n, value)`, asked before each search probe after n made (`value` the one it would probe), may stop
    the search early (a time budget): the result then states max_points as n, the points it made, so a replay
    stops where the build did."""
    threshold = slo.thresholds().get(slo.p99_metric)
    if threshold is None:
        raise CapacityError(f"slo.{slo.p99_metric}: capacity needs the threshold of the p99 metric")
    s = search
    cap = s.max_value if s.max_value is not None else float("inf")
    if s.max_value is None and s.rule == "capped":
        raise CapacityError("capacity: a capped search needs max_value")
    if not 0 < s.min_value <= s.start <= cap:
        raise CapacityError(
            f"capacity: need 0 < min_value ≤ start ≤ max_value, got {s.min_value}, {s.start}, {s.max_value}"
        )
    probes = _Search(run, knob, min_attainment, slo.p99_metric, more)
    if s.rule == "bracketing":
        lo, hi = _bracket_to_clear_fail(probes, s, threshold)
    else:
        lo, hi = _bracket(probes, s.start, s.min_value, cap, s.max_points)
    while lo is not None and hi is not None and not narrow(knob, lo, hi, s.tolerance):
        mid = (lo + hi) / 2 if knob == "rate" else float((int(lo) + int(hi)) // 2)
        if probes.full(s.max_points, mid):
            break
        lo, hi = (mid, hi) if probes.probe(mid) else (lo, mid)
    if probes.stopped:  # stated as run: a replay with the points made stops where the build did
        search = s = s.model_copy(update={"max_points": len(probes.points)})
    stop = _stop_reason(probes, lo, hi, s)
    confirmed, repeats = None, []
    if confirm is not None and lo is not None:
        if s.rule == "bracketing":
            confirmed, repeats = _confirm_steps(probes, confirm, repeat, lo, s)
            if not confirmed:
                stop += f"; no confirmation step of {s.confirm_runs} run(s) held"
        else:
            confirmed = _confirm(
                probes, confirm, lo, s.min_value, s.max_confirmations, s.tolerance, s.confirm_step
            )
        if not confirmed:
            stop += "; the answer was not confirmed by a long run"
    result = _result(probes, slo, stop, min_attainment, confirmed, repeats)
    return result.model_copy(update={"search": search, "method": SEARCH_METHODS[s.rule]}), repeats


def clear_fail(point: CapacityPoint, threshold: float, key: str) -> bool:
    """A failed point the probes cannot mistake: its p99's 95 % interval wholly above the threshold, or more
    than MAX_FAILED_FRACTION of its requests failed (RANGE_METHOD's high end)."""
    if point.passed:
        return False
    ci = point.metrics.percentile_ci.get(key)
    m = point.metrics
    return bool(
        (ci is not None and ci.lower is not None and ci.lower > threshold)
        or (m.measured and m.failed > MAX_FAILED_FRACTION * m.measured)
    )


def _bracket_to_clear_fail(
    search: _Search, s: CapacitySearch, threshold: float
) -> tuple[float | None, float | None]:
    """Doubling from the start until a clear fail, the cap or the point budget (halving while the start
    fails); then the bracket [highest pass, lowest fail above it] the points establish."""
    cap = s.max_value if s.max_value is not None else float("inf")
    key = f"{search.slo_metric}.p99"
    value = s.start
    if not search.probe(value):
        return _bracket_down(search, value, s.min_value, s.max_points)
    while value < cap:
        value = min(value * 2, cap)
        if search.full(s.max_points, value):
            break
        search.probe(value)
        if clear_fail(search.points[-1], threshold, key):
            break
    return answer(search.points)


def _confirm_steps(
    search: _Search, confirm, repeat, lo: float, s: CapacitySearch
) -> tuple[bool, list[CapacityPoint]]:
    """Confirmation steps of `s.confirm_runs` runs at one value (search rule bracketing): the first by
    `confirm`, the others by `repeat`; a failed run ends its step (its runs join the points) and the answer
    steps down and is confirmed again, up to `s.max_confirmations` steps."""
    for _ in range(s.max_confirmations):
        runs: list[CapacityPoint] = []
        held = search.probe(lo, runner=confirm)
        while held and repeat is not None and len(runs) < s.confirm_runs - 1:
            res = repeat(int(lo) if search.knob == "concurrency" else lo)
            point = (
                res if isinstance(res, CapacityPoint) else judge_point(lo, res, search.min_attainment, True)
            )
            runs.append(point)
            held = point.passed
        if held:
            return True, runs
        search.points.extend(runs)  # the failed step's runs: the last one's failure decides its value
        lo = _step_down(search, lo, s.tolerance, s.confirm_step)
        if lo < s.min_value:
            break
    return False, []


def _confirm(search: _Search, confirm, lo, floor, attempts: int, tolerance: float, step: ConfirmStep) -> bool:
    """Confirm `lo` with a long run; on a failure the answer steps down (CONFIRM_STEP_WORDS[step]) and is
    confirmed again, up to `attempts` runs."""
    for _ in range(attempts):
        if search.probe(lo, runner=confirm):
            return True
        lo = _step_down(search, lo, tolerance, step)
        if lo < floor:
            break
    return False


def _step_down(search: _Search, failed: float, tolerance: float, step: ConfirmStep) -> float:
    """The next value to confirm after a long run failed at `failed`."""
    verdict = {p.value: p.passed for p in search.points}  # a value's last run decides, as in answer()
    below = [v for v, ok in verdict.items() if ok and v < failed]
    if step == "bisect-long" and below:
        held = {p.value: p.passed for p in search.points if p.confirmation}
        long_passes = [v for v, ok in held.items() if ok and v < failed]
        marginal = any(p.passed for p in search.points if p.confirmation and p.value == failed)
        below = long_passes or (below if marginal else [min(below)])
    if step in ("bisect", "bisect-long") and below:
        base = max(below)
        if search.knob == "concurrency":
            mid = float((int(base) + int(failed)) // 2)
            return mid if mid > base else base
        return (base + failed) / 2 if failed - base > tolerance * base else base
    if search.knob == "concurrency":
        return failed - 1
    lower = [p.value for p in search.points if p.passed and not p.confirmation and p.value < failed]
    return max(lower) if lower else failed / (1 + tolerance)


class _Search:
    def __init__(self, run, knob: Knob, min_attainment: float | None, slo_metric: str = "", more=None):
        self.run, self.knob, self.min_attainment = run, knob, min_attainment
        self.slo_metric, self.more, self.stopped = slo_metric, more, False
        self.points: list[CapacityPoint] = []

    def full(self, max_points: int, value: float) -> bool:
        """No further search probe (at `value`): the point budget spent, or `more` said stop (then for good)."""
        if len(self.points) >= max_points:
            return True
        self.stopped = self.stopped or (self.more is not None and not self.more(len(self.points), value))
        return self.stopped

    def probe(self, value: float, runner=None) -> bool:
        res = (runner or self.run)(int(value) if self.knob == "concurrency" else value)
        point = judge_point(value, res, self.min_attainment, confirmation=runner is not None)
        self.points.append(point)
        return point.passed


def _bracket(search: _Search, start, floor, ceiling, max_points) -> tuple[float | None, float | None]:
    value = start
    if search.probe(value):
        while value < ceiling:
            nxt = min(value * 2, ceiling)
            if search.full(max_points, nxt):
                break
            if not search.probe(nxt):
                return value, nxt
            value = nxt
        return value, None
    return _bracket_down(search, value, floor, max_points)


def _bracket_down(search: _Search, value, floor, max_points) -> tuple[float | None, float | None]:
    """Halving from a failed `value` until a pass, the floor or the point budget."""
    while value > floor:
        nxt = max(value / 2, floor)
        if search.knob == "concurrency":
            nxt = float(max(int(nxt), 1))
        if search.full(max_points, nxt):
            break
        if search.probe(nxt):
            return nxt, value
        value = nxt
    return None, value


def narrow(knob: Knob, lo: float, hi: float, tolerance: float) -> bool:
    """Whether a bracket [lo, hi) is at the search's resolution: one user, or `tolerance` of lo for a rate."""
    return hi - lo <= 1 if knob == "concurrency" else hi - lo <= tolerance * lo


def _stop_reason(search, lo, hi, s: CapacitySearch) -> str:
    if lo is None:
        return "no probed value passed down to the minimum value"
    if hi is None:
        if s.rule == "bracketing" and s.max_value is not None and lo >= s.max_value:
            return f"every probed value passed up to the cap (max_value {s.max_value:g}): capacity is at least that"
        if s.rule == "bracketing":
            return f"point budget ({s.max_points}) spent before a probe failed: capacity is at least the highest pass"
        return "every probed value passed up to the maximum value: capacity is at least that"
    if narrow(search.knob, lo, hi, s.tolerance):
        return "bracket narrowed to the tolerance"
    return f"point budget ({s.max_points}) spent before the bracket narrowed"


def answer(
    points: list[CapacityPoint], repeats: Sequence[CapacityPoint] = ()
) -> tuple[float | None, float | None]:
    """(capacity, lowest failing value above it) that the judged points establish. A value's verdict is its
    last run's (a long confirmation after its search probe, when there was one), and with `repeats` of that
    run, every one of them must pass too (REPEATS_RULE). The search and `factsheet validate` both derive the
    answer through this."""
    verdict = {p.value: p.passed for p in points}  # later runs of a value override earlier ones
    for r in repeats:  # a repeat does not override its run: the value holds only if every run held
        verdict[r.value] = verdict.get(r.value, True) and r.passed
    # Once long runs are made, a short probe's pass is evidence only below every long run that failed, and
    # none above one that held (confirm_step bisect-long may step below passing probes; the other steps
    # never leave a probe's pass there, so their answers are the highest value passed, as always).
    long_runs = {p.value for p in points if p.confirmation} | {r.value for r in repeats}
    failed = [v for v in long_runs if not verdict[v]]
    held = [v for v in long_runs if verdict[v]]
    passes = [v for v, ok in verdict.items() if ok and (not failed or v < min(failed))]
    highest = max(held) if held else max(passes, default=None)
    above = [v for v, ok in verdict.items() if not ok and (highest is None or v > highest)]
    return highest, min(above, default=None)


def answer_point(points: list[CapacityPoint], capacity: float | None) -> CapacityPoint | None:
    """The run whose figures stand for the answer: its confirmation (the long run) when there is one."""
    at = [p for p in points if p.value == capacity and p.passed]
    return next((p for p in reversed(at) if p.confirmation), at[-1] if at else None)


def _result(search, slo, stop, min_attainment, confirmed, repeats=()) -> CapacityResult:
    capacity, hi = answer(search.points, repeats)
    best = answer_point(search.points, capacity)
    # A confirmation step's further runs (isolated: rule bracketing) count as repeats of its first run.
    further = [*(p for p in search.points if p.isolation is not None), *repeats]
    main = [p for p in search.points if p.isolation is None]
    return CapacityResult(
        knob=search.knob,
        slo=slo,
        min_attainment=min_attainment,
        capacity=capacity,
        bracket=(capacity, hi),
        points=search.points,
        stop_reason=stop,
        insufficient_samples=bool(best and best.sufficient_samples is False),
        confirmed=confirmed,
        range=capacity_range(main, slo, further),
    )


def settle_repeats(result: CapacityResult, repeats: Sequence[CapacityPoint]) -> CapacityResult:
    """The search's result with the repeats of its last confirmation run applied (REPEATS_RULE): unchanged
    when every repeat passed, or when that confirmation had failed already (it was not the answer); else the
    answer falls to the highest other value whose last run passed, unconfirmed, with no further run made."""
    if not repeats:
        return result
    value = repeats[0].value
    last = next((p for p in reversed(result.points) if p.confirmation), None)
    if last is None or not last.passed or all(r.passed for r in repeats):
        return result
    capacity, high = answer(result.points, repeats)
    best = answer_point(result.points, capacity)
    held = 1 + sum(r.passed for r in repeats)
    why = (
        f"; the confirmation at {value:g} held in {held} of {len(repeats) + 1} runs (repeats: every run must "
        "pass), so the answer is the highest other value whose last run passed, not confirmed by a long run"
    )
    return result.model_copy(
        update={
            "capacity": capacity,
            "bracket": (capacity, high),
            "confirmed": False,
            "insufficient_samples": bool(best and best.sufficient_samples is False),
            "range": capacity_range(result.points, result.slo, repeats),
            "stop_reason": result.stop_reason + why,
        }
    )


def capacity_range(
    points: list[CapacityPoint], slo: SLO, repeats: Sequence[CapacityPoint] = ()
) -> tuple[float | None, float | None]:
    """(low, high) per RANGE_METHOD: what the probes establish at 95 % about where the capacity lies. With
    `repeats` of the last run at a value (REPEATS_RULE): a value with a failed repeat is no clear pass, and a
    value whose runs disagree (one passed, another failed) is no clear fail either: one run's interval is
    the noise within that run, and the runs show the deployment holding there in one build and not in the
    next. A value every run of which failed counts each clear failure, as without repeats."""
    last = {p.value: p for p in points}  # the run each repeat repeats: the last at its value
    mixed = {
        r.value for r in repeats if r.value in last and {r.passed, last[r.value].passed} == {True, False}
    }
    unheld = {r.value for r in repeats if not r.passed} | mixed
    points = [p for p in [*points, *repeats] if p.value not in mixed or p.passed]
    threshold = slo.thresholds()[slo.p99_metric]
    key = f"{slo.p99_metric}.p99"

    def bounds(p: CapacityPoint) -> tuple[float | None, float | None]:
        ci = p.metrics.percentile_ci.get(key)
        return (ci.lower, ci.upper) if ci is not None else (None, None)

    fails = [p.value for p in points if clear_fail(p, threshold, key)]
    high = min(fails) if fails else None
    clear_pass = [
        p.value
        for p in points
        if p.passed
        and p.value not in unheld
        and bounds(p)[1] is not None
        and bounds(p)[1] <= threshold
        and (high is None or p.value < high)
    ]
    return (max(clear_pass) if clear_pass else None, high)
