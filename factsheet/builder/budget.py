"""The build's plan and time budget (factsheet/document/plan.py states the rules): a calibration request,
each part's estimate, and the capacity searches' probes cut to what the budget leaves."""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass

from factsheet.document.plan import BuildPlan, Calibration, PlanItem
from factsheet.spec.build import BuildSpec, CapacitySpec
from probes.core.measurement import NotMeasured
from probes.core.progress import duration
from probes.load.point import LoadPoint
from probes.load.runner import run_point
from probes.load.workloads.profiles import ChatSessionsProfile, WorkloadProfile

MIN_POINTS = 2  # a search needs a start and one more value to bracket anything
# A search's probes above capacity queue (the clear fail that ends the doubling, about half the bisection's):
# their requests take longer than the calibration's. Against the mock (8 slots, E2EL 171 ms) a failed probe
# took 1.4–1.8× a passing one's rounds; over a search, 1.4× the rounds is the plan's allowance.
QUEUE_ALLOWANCE = 1.4
# The plan fits its estimate in this share of the budget left: the rest absorbs the estimate's own error.
RESERVE = 0.9


@dataclass(frozen=True)
class PlannedSearch:
    """A capacity search as the plan sees it: its spec, its workload and its name in the plan's words."""

    spec: CapacitySpec
    profile: WorkloadProfile | None
    what: str


def calibrate(base_url: str, model: str, template: LoadPoint, **run_kw) -> Calibration | NotMeasured:
    """One request of the template's shape per worker (one worker: concurrency 1), timed: the plan's unit of
    cost. A calibration that fails is no plan, never a failed build: the measured runs say what failed."""
    users = run_kw.get("workers", 1)
    point = template.model_copy(update={"mode": "closed", "concurrency": users, "rate": None,
                                        "num_requests": users, "warmup_requests": 0, "cooldown_requests": 0,
                                        "duration_s": None})  # fmt: skip
    t0 = time.monotonic()
    try:
        result = asyncio.run(run_point(base_url, model, point, run_kw.pop("slo"), **run_kw))
    except Exception as exc:  # noqa: BLE001 - an estimate's failure is stated, the build goes on
        return NotMeasured(
            reason=f"the calibration request failed ({exc}): no estimate, so no plan to a budget"
        )
    wall_ms = (time.monotonic() - t0) * 1000.0
    m = result.metrics
    if not m.completed or m.e2el_ms.mean is None:
        return NotMeasured(
            reason="the calibration request did not complete: no estimate, so no plan to a budget"
        )
    wall_ms = max(wall_ms, m.e2el_ms.mean)
    tpot = m.tpot_ms.mean if m.tpot_ms is not None and m.tpot_ms.n else None
    return Calibration(e2el_ms=m.e2el_ms.mean, ttft_ms=m.ttft_ms.mean, tpot_ms=tpot,
                       startup_ms=wall_ms - m.e2el_ms.mean)  # fmt: skip


def run_s(cal: Calibration, n: int, *, concurrency: int | None = None, rate: float | None = None) -> float:
    """A run of `n` requests (ESTIMATE_METHOD)."""
    e2el, start = cal.e2el_ms / 1000, cal.startup_ms / 1000
    if concurrency is not None:
        return start + math.ceil(n / concurrency) * e2el
    if rate is not None:
        return start + n / rate + e2el
    return start + n * e2el  # a trace: its own schedule, taken as one request after another


def _per_user(profile: WorkloadProfile | None) -> int:
    return profile.turns_max if isinstance(profile, ChatSessionsProfile) else 2


def probe_s(cal: Calibration, s: PlannedSearch, value: float) -> float:
    n = s.spec.requests_at(s.spec.num_requests, value, _per_user(s.profile))
    if s.spec.knob == "concurrency":
        alone = run_s(cal, n, concurrency=int(value))
    else:
        alone = run_s(cal, n, rate=value)
    start = cal.startup_ms / 1000
    return start + QUEUE_ALLOWANCE * (alone - start)


def probes_s(cal: Calibration, s: PlannedSearch, points: int) -> float:
    """`points` probes along the doubling path from the start (capped at max_value)."""
    cap = s.spec.max_value if s.spec.max_value is not None else math.inf
    return sum(probe_s(cal, s, min(s.spec.start * 2**i, cap)) for i in range(points))


def confirm_s(cal: Calibration, s: PlannedSearch) -> float:
    """One confirmation run, at the start value (the longest where latency does not grow with load)."""
    if s.spec.confirm_requests is None:
        return 0.0
    n = s.spec.requests_at(s.spec.confirm_requests, s.spec.start, _per_user(s.profile))
    if s.spec.knob == "concurrency":
        return run_s(cal, n, concurrency=int(s.spec.start))
    return run_s(cal, n, rate=s.spec.start)


def plan(
    spec: BuildSpec,
    cal: Calibration,
    searches: list[PlannedSearch],
    points: list[LoadPoint],
    *,
    elapsed_s: float,
    isolation_s: float,
    budget_s: float | None,
    budget_from: str | None,
) -> tuple[BuildPlan, list[int]]:
    """The plan and each search's probes (max_points as cut by the budget, BUDGET_RULE)."""
    fixed: list[PlanItem] = []
    for i, p in enumerate(points, 1):
        each = run_s(cal, p.num_requests, concurrency=p.concurrency, rate=p.rate)
        fixed.append(PlanItem(what=f"load point {i}: {p.label}", runs=1, each_s=each, total_s=each))
    if spec.energy is not None:
        fixed.append(
            PlanItem(what="energy: idle power", runs=1, each_s=spec.energy.idle_s, total_s=spec.energy.idle_s)
        )
    for s in searches:
        if s.spec.confirm_requests is not None:
            k, more = s.spec.repeats, s.spec.max_confirmations - 1
            each = confirm_s(cal, s)
            step = k * each + (k - 1) * isolation_s
            again = f"; each further step, on a failed run: +{duration(step)}, {more} at most" if more else ""
            fixed.append(PlanItem(what=f"{s.what}: a confirmation step of {k} run(s){again}", runs=k, each_s=each,
                                  total_s=step))  # fmt: skip
    if spec.accuracy is not None:
        fixed.append(_accuracy(spec, cal))
    if spec.tuning is not None:
        t = spec.tuning.time_budget_s
        fixed.append(PlanItem(what="tuning (its own time budget)", runs=1, each_s=t, total_s=t))
    left = None if budget_s is None else RESERVE * (budget_s - elapsed_s) - sum(i.total_s for i in fixed)
    cuts, counts, probe_items = [], [], []
    for s in searches:
        n = s.spec.max_points
        if left is not None:
            while n > MIN_POINTS and probes_s(cal, s, n) > left:
                n -= 1
            if n < s.spec.max_points:
                cuts.append(f"{s.what}: {n} probes, not {s.spec.max_points}: budget")
        total = probes_s(cal, s, n)
        if left is not None:
            left -= total
        counts.append(n)
        probe_items.append(PlanItem(what=f"{s.what}: search probes", runs=n, each_s=total / n, total_s=total))
    head = len(points) + (spec.energy is not None)  # the sweep (and idle power) run first, then the searches
    items = fixed[:head] + probe_items + fixed[head:]
    estimate = sum(i.total_s for i in items)
    if budget_s is not None and estimate > RESERVE * (budget_s - elapsed_s):
        cuts.append(f"over budget: the plan needs {duration(elapsed_s + estimate)} of {duration(budget_s)} with "
                    f"every search at its least ({MIN_POINTS} probes)")  # fmt: skip
    built = BuildPlan(budget_s=budget_s, budget_from=budget_from, calibration=cal, elapsed_before_s=elapsed_s,
                      items=items, estimate_s=estimate, cuts=cuts)  # fmt: skip
    return built, counts


def _accuracy(spec: BuildSpec, cal: Calibration) -> PlanItem:
    acc = spec.accuracy
    tasks = acc.subset.first or acc.subset.sample or 164  # HumanEval+'s 164 tasks when not cut
    requests = tasks * acc.n_samples
    per = (cal.ttft_ms or cal.e2el_ms) / 1000 + acc.max_tokens * (cal.tpot_ms or 0.0) / 1000
    rounds = math.ceil(requests / acc.concurrency)
    return PlanItem(
        what=f"accuracy: {requests} completions, at most", runs=rounds, each_s=per, total_s=rounds * per
    )


def lines(p: BuildPlan) -> list[str]:
    """The plan in words, as the build prints it before its first measured request."""
    cal = p.calibration
    budget = f"budget {duration(p.budget_s)} ({p.budget_from}); " if p.budget_s is not None else "no budget; "
    out = [f"plan: {budget}estimate {duration(p.estimate_s)} from here, {duration(p.elapsed_before_s)} spent so far "
           f"(calibration request: E2EL {cal.e2el_ms:.0f} ms, run start-up {cal.startup_ms:.0f} ms)"]  # fmt: skip
    out += [f"  {i.what}: {i.runs} × ~{duration(i.each_s)} = ~{duration(i.total_s)}" for i in p.items]
    out += [f"  cut: {c}" for c in p.cuts]
    return out
