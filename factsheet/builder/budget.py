"""The build's plan and time budget (factsheet/document/plan.py states the rules): a calibration request,
each part's estimate, and the capacity searches' probes cut to what the budget leaves."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from factsheet.document.plan import CALIBRATION_ROUNDS, BuildPlan, Calibration, LoadRound, PlanItem
from factsheet.spec.build import BuildSpec, CapacitySpec
from probes.core.measurement import NotMeasured
from probes.core.progress import duration
from probes.load.capacity import search_capacity
from probes.load.metrics import compute_metrics
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord
from probes.load.runner import run_point
from probes.load.workloads.profiles import WorkloadProfile, turns_per_user

MIN_POINTS = 2  # a search needs a start and one more value to bracket anything
# Where the calibration sees no growth of latency with load, a search's probes above capacity still queue (the
# clear fail that ends the doubling, about half the bisection's): their requests take longer than the
# calibration's. Against the mock (8 slots, E2EL 171 ms) a failed probe took 1.4–1.8× a passing one's rounds;
# over a search, 1.4× the rounds is the plan's allowance. Where it sees growth, its law (`Growth`) says it.
QUEUE_ALLOWANCE = 1.4
# The second calibration round's users: the first closed-loop search's start × this (three doublings up its path).
GROWTH_ROUND = 8
# Latency "grew with load" where the second calibration round's mean E2EL is this far above the first request's.
GROWTH_SEEN = 1.1
# Two calibration rounds whose mean E2ELs are this close stand for the median of three (no third is sent).
ROUNDS_AGREE = 1.1
SIMULATED_REQUESTS = 16  # requests of a run simulated on the law: all alike, so their count decides nothing
# As a search goes, the next probe is allowed this many times its longest expected time (BUDGET_RULE).
NEXT_PROBE_ALLOWANCE = 1.5
# The plan fits its estimate in this share of the budget left: the rest absorbs the estimate's own error.
RESERVE = 0.9


@dataclass(frozen=True)
class PlannedSearch:
    """A capacity search as the plan sees it: its spec, its workload and its name in the plan's words."""

    spec: CapacitySpec
    profile: WorkloadProfile | None
    what: str


def _round(base_url: str, model: str, template: LoadPoint, users: int, **run_kw):
    """One request per user, all sent at once, timed: (its result, its wall time in ms)."""
    point = template.model_copy(update={"mode": "closed", "concurrency": users, "rate": None,
                                        "num_requests": users, "warmup_requests": 0, "cooldown_requests": 0,
                                        "duration_s": None})  # fmt: skip
    t0 = time.monotonic()
    result = asyncio.run(run_point(base_url, model, point, run_kw.pop("slo"), **run_kw))
    return result, (time.monotonic() - t0) * 1000.0


def _median_round(base_url: str, model: str, template: LoadPoint, users: int, **run_kw):
    """Rounds of `users` (round r drawn with the template's seed + r), two, and a third where their mean E2ELs
    differ by more than ROUNDS_AGREE (ESTIMATE_METHOD): the one of median mean E2EL (of two: the lesser) as (its
    result, its wall time in ms), and every round's mean E2EL in the order run; None where one does not
    complete. A busy host stalls a round of a second or so now and then (at 256 users one read 1,302 ms where
    others read 870): a plan made from it overstated every run's latency."""
    rounds = []
    for r in range(CALIBRATION_ROUNDS):
        result, wall_ms = _round(base_url, model, template.model_copy(update={"seed": template.seed + r}), users,
                                 **run_kw)  # fmt: skip
        if not result.metrics.completed or result.metrics.e2el_ms.mean is None:
            return None
        rounds.append((result, wall_ms))
        means = sorted(rw[0].metrics.e2el_ms.mean for rw in rounds)
        if len(rounds) == 2 and means[1] <= ROUNDS_AGREE * means[0]:
            break  # the third's median would lie with these two
    ranked = sorted(rounds, key=lambda rw: rw[0].metrics.e2el_ms.mean)
    return ranked[(len(ranked) - 1) // 2], [rw[0].metrics.e2el_ms.mean for rw in rounds]


def calibrate(base_url: str, model: str, template: LoadPoint, **run_kw) -> Calibration | NotMeasured:
    """One request of the template's shape per worker (one worker: concurrency 1), timed, in
    CALIBRATION_ROUNDS rounds, the median taken: the plan's unit of cost. A calibration that fails is no plan,
    never a failed build: the measured runs say what failed."""
    try:
        taken = _median_round(base_url, model, template, run_kw.get("workers", 1), **run_kw)
    except Exception as exc:  # noqa: BLE001 - an estimate's failure is stated, the build goes on
        return NotMeasured(
            reason=f"the calibration request failed ({exc}): no estimate, so no plan to a budget"
        )
    if taken is None:
        return NotMeasured(
            reason="the calibration request did not complete: no estimate, so no plan to a budget"
        )
    (result, wall_ms), means = taken
    m = result.metrics
    wall_ms = max(wall_ms, m.e2el_ms.mean)
    tpot = m.tpot_ms.mean if m.tpot_ms is not None and m.tpot_ms.n else None
    return Calibration(e2el_ms=m.e2el_ms.mean, ttft_ms=m.ttft_ms.mean, tpot_ms=tpot,
                       startup_ms=wall_ms - m.e2el_ms.mean, rounds_ms=means)  # fmt: skip


@dataclass(frozen=True)
class Growth:
    """Latency under load, from the calibration's second round (`users` requests at once): with the first
    request, a law linear in users (ESTIMATE_METHOD)."""

    users: int
    e2el_ms: float
    from_users: int  # the calibration's own users (its workers)
    from_ms: float  # the calibration's E2EL
    rounds_ms: tuple[float, ...] = ()  # every round's mean E2EL, in the order run
    p99_ms: float | None = None  # the taken round's p99 E2EL (None: as its mean)

    def seen(self) -> bool:
        """Whether latency grew with load beyond a round's own noise."""
        return self.users > self.from_users and self.e2el_ms > GROWTH_SEEN * self.from_ms

    def e2el_s(self, users: float) -> float:
        """The mean E2EL at `users`: what a run's rounds take."""
        return self._line(self.e2el_ms, users)

    def p99_s(self, users: float) -> float:
        """The p99 E2EL at `users`: what the search judges. Under queueing the two part (8 slots, 16 users: mean
        1.5×, p99 2× one request's), and a law on the mean alone put the capacity past a cliff the round saw."""
        return self._line(self.e2el_ms if self.p99_ms is None else max(self.p99_ms, self.e2el_ms), users)

    def _line(self, at_ms: float, users: float) -> float:
        slope = (at_ms - self.from_ms) / (self.users - self.from_users)
        return (self.from_ms + slope * (users - self.from_users)) / 1000


def calibrate_load(
    base_url: str, model: str, template: LoadPoint, cal: Calibration, users: int, **run_kw
) -> Growth | None:
    """The calibration's second round, at `users` users (a capacity search's start × 8), in
    CALIBRATION_ROUNDS rounds, the median taken: how latency grows with load. None where one fails or does
    not complete (the plan then takes latency not to grow)."""
    workers = run_kw.get("workers", 1)
    try:
        taken = _median_round(base_url, model, template, users, **run_kw)
    except Exception:  # noqa: BLE001 - no law, stated by the plan's method: latency taken not to grow
        return None
    if taken is None:
        return None
    (result, _), means = taken
    m = result.metrics
    return Growth(users, m.e2el_ms.mean, workers, cal.e2el_ms, tuple(means), m.e2el_ms.p(99))


def run_s(cal: Calibration, n: int, *, concurrency: int | None = None, rate: float | None = None) -> float:
    """A run of `n` requests (ESTIMATE_METHOD)."""
    e2el, start = cal.e2el_ms / 1000, cal.startup_ms / 1000
    if concurrency is not None:
        return start + math.ceil(n / concurrency) * e2el
    if rate is not None:
        return start + n / rate + e2el
    return start + n * e2el  # a trace: its own schedule, taken as one request after another


def probe_s(cal: Calibration, s: PlannedSearch, value: float) -> float:
    n = s.spec.requests_at(s.spec.num_requests, value, s.profile)
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
    n = s.spec.requests_at(s.spec.confirm_requests, s.spec.start, s.profile)
    if s.spec.knob == "concurrency":
        return run_s(cal, n, concurrency=int(s.spec.start))
    return run_s(cal, n, rate=s.spec.start)


@dataclass(frozen=True)
class Simulated:
    """A search run on the latency law: each probe's estimate, and the confirmation step at its answer."""

    probes_s: list[float]
    confirm_value: float | None


def _law_run(law: Growth, slo: SLO, requests: Callable[[float], int], costs: list[float], start_s: float):
    """A run on the law, as the search judges it (its requests all alike, at the law's p99), its estimate (its
    rounds at the law's p99: a closed loop ends with its slowest user, and under queueing its rounds last the
    tail, not the mean) added to `costs`."""

    def run(value: float):
        p99 = law.p99_s(value)
        costs.append(start_s + math.ceil(requests(value) / value) * p99)
        recs = [RequestRecord(index=i, sent_s=0.0, first_chunk_s=0.001, chunk_s=[0.001, p99], end_s=p99,
                              output_tokens=2) for i in range(SIMULATED_REQUESTS)]  # fmt: skip

        class Measured:
            metrics = compute_metrics(recs, slo)
            arrivals = None

        return Measured()

    return run


def simulate(
    cal: Calibration, law: Growth | None, s: PlannedSearch, slo: SLO, points: int
) -> Simulated | None:
    """The search's own rule (doubling to a clear fail, bisection to its resolution) run on the latency law, at
    most `points` probes: the probes it would make and the value it would confirm. None where there is no law
    (latency not seen to grow, a rate knob, a p99 not on E2EL) or the law never fails within the search's
    reach: the search's length is then its point budget (`probes_s`)."""
    threshold = slo.thresholds().get(slo.p99_metric)
    if law is None or not law.seen() or s.spec.knob != "concurrency" or slo.p99_metric != "e2el_ms":
        return None
    judged = SLO(e2el_ms=threshold, p99_metric="e2el_ms")
    start_s, costs = cal.startup_ms / 1000, []
    requests = lambda v: s.spec.requests_at(s.spec.num_requests, v, s.profile)  # noqa: E731
    params = s.spec.search_parameters().model_copy(update={"max_points": points})
    result, _ = search_capacity(_law_run(law, judged, requests, costs, start_s), judged, params,
                                knob="concurrency")  # fmt: skip
    if all(p.passed for p in result.points):
        return None
    return Simulated(probes_s=costs, confirm_value=result.capacity)


def search_probes(
    cal: Calibration, law: Growth | None, s: PlannedSearch, slo: SLO, points: int
) -> tuple[int, float]:
    """The probes a search is estimated to make with `points` at most, and their time: on the law where it
    sees the search's bracket, else all `points` along the doubling path."""
    sim = simulate(cal, law, s, slo, points)
    return (points, probes_s(cal, s, points)) if sim is None else (len(sim.probes_s), sum(sim.probes_s))


def confirm_value(cal: Calibration, law: Growth | None, s: PlannedSearch, slo: SLO) -> float | None:
    """The value the law's search would confirm; None without one (the start value is then taken)."""
    sim = None if law is None else simulate(cal, law, s, slo, s.spec.max_points)
    return None if sim is None else sim.confirm_value


def search_confirm_s(cal: Calibration, law: Growth | None, s: PlannedSearch, at: float | None) -> float:
    """One confirmation run: at the answer the law gives (`at`, confirm_value; its latency there), else at
    the start value."""
    if law is None or at is None or s.spec.confirm_requests is None:
        return confirm_s(cal, s)
    n = s.spec.requests_at(s.spec.confirm_requests, at, s.profile)
    return cal.startup_ms / 1000 + math.ceil(n / at) * law.e2el_s(at)


def warm_up_s(cal: Calibration, law: Growth | None, s: PlannedSearch, at: float | None) -> float:
    """The warm-up round after a fresh start (WARM_UP_RULE), at the value a confirmation run is estimated at
    (`at`, confirm_value): c users' turns at once (start-up + E2EL at c users a turn), or ⌈r⌉ at rate r."""
    turns = turns_per_user(s.profile)
    if law is not None and at is not None:  # the law's value: a closed loop
        return cal.startup_ms / 1000 + turns * law.e2el_s(at)
    v = s.spec.start
    if s.spec.knob == "concurrency":
        return run_s(cal, turns * int(v), concurrency=int(v))
    return run_s(cal, max(1, math.ceil(v)), rate=v)


@dataclass(frozen=True)
class ProbeTime:
    """A search probe as made: its value, its requests and its wall time."""

    value: float
    requests: int
    seconds: float


def _work_bound_s(made: ProbeTime, value: float, knob: str, requests: int) -> float:
    """The time a probe at `value` of `requests` takes at most, from one made on the same host: a closed
    loop runs ⌈n / c⌉ rounds, each at most c'/c times as long with more users (a saturated server serves its
    users in turn: latency grows at most with them); an open loop sends n / r, at most r/r' times as long at a
    lower rate, and its queue drains no slower at a higher one."""
    if knob == "concurrency":
        rounds = math.ceil(requests / value) / math.ceil(made.requests / made.value)
        return made.seconds * rounds * max(1.0, value / made.value)
    return made.seconds * max(1.0, made.value / value) * requests / made.requests


def next_probe_s(made: list[ProbeTime], value: float, knob: str, requests: int) -> float:
    """The time the budget allows the search's next probe (BUDGET_RULE): 1.5 × (a busy host's stretch) the
    longer of the longest so far and the least of the work bounds from the probes made (a doubling past capacity
    doubles a closed loop's probe time)."""
    longest = max(p.seconds for p in made)
    return NEXT_PROBE_ALLOWANCE * max(longest, min(_work_bound_s(p, value, knob, requests) for p in made))


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
    law: Growth | None = None,
    warm_up: bool = False,
    calibrated_s: float | None = None,
) -> tuple[BuildPlan, list[int]]:
    """The plan and each search's probes (max_points as cut by the budget, BUDGET_RULE). `isolation_s`: what
    isolating a repeat costs (a fresh start: the build's own start); `warm_up`: a warm-up round follows it;
    `calibrated_s`: the calibration's time, done when the plan is made (its first part, as taken)."""
    fixed: list[PlanItem] = []
    if calibrated_s is not None:  # done when the plan is made: its part of the time taken, as taken
        rounds = max(len(cal.rounds_ms), 1) + (0 if law is None else max(len(law.rounds_ms), 1))
        fixed.append(PlanItem(what="calibration (done: as taken)", runs=rounds, each_s=calibrated_s / rounds,
                              total_s=calibrated_s))  # fmt: skip
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
            at = confirm_value(cal, law, s, spec.load.slo)  # one simulated search for both
            each = search_confirm_s(cal, law, s, at)
            warm = warm_up_s(cal, law, s, at) if warm_up and k > 1 else 0.0
            step = k * each + (k - 1) * (isolation_s + warm)
            after = (
                f"; each further run after a fresh start and a warm-up round (~{duration(warm)})"
                if warm
                else ""
            )
            again = f"; each further step, on a failed run: +{duration(step)}, {more} at most" if more else ""
            fixed.append(PlanItem(what=f"{s.what}: a confirmation step of {k} run(s){after}{again}", runs=k,
                                  each_s=each, total_s=step))  # fmt: skip
    if spec.accuracy is not None:
        fixed.append(_accuracy(spec, cal))
    if spec.tuning is not None:
        t = spec.tuning.time_budget_s
        fixed.append(PlanItem(what="tuning (its own time budget)", runs=1, each_s=t, total_s=t))
    left = None if budget_s is None else RESERVE * (budget_s - elapsed_s) - sum(i.total_s for i in fixed)
    cuts, counts, probe_items = [], [], []
    for s in searches:
        n = s.spec.max_points
        made, total = search_probes(cal, law, s, spec.load.slo, n)
        if left is not None:
            while n > MIN_POINTS and total > left:
                n -= 1
                made, total = search_probes(cal, law, s, spec.load.slo, n)
            if n < s.spec.max_points and made == n:
                cuts.append(f"{s.what}: {n} probes, not {s.spec.max_points}: budget")
            left -= total
        counts.append(n)
        probe_items.append(PlanItem(what=f"{s.what}: search probes", runs=made, each_s=total / made,
                                    total_s=total))  # fmt: skip
    # the calibration, the sweep (and idle power) run first, then the searches
    head = (calibrated_s is not None) + len(points) + (spec.energy is not None)
    items = fixed[:head] + probe_items + fixed[head:]
    estimate = sum(i.total_s for i in items)
    if budget_s is not None and estimate > RESERVE * (budget_s - elapsed_s):
        cuts.append(f"over budget: the plan needs {duration(elapsed_s + estimate)} of {duration(budget_s)} with "
                    f"every search at its least ({MIN_POINTS} probes)")  # fmt: skip
    load_round = (
        None
        if law is None
        else LoadRound(users=law.users, e2el_ms=law.e2el_ms, rounds_ms=list(law.rounds_ms), p99_ms=law.p99_ms)
    )
    built = BuildPlan(budget_s=budget_s, budget_from=budget_from, calibration=cal, load_round=load_round,
                      elapsed_before_s=elapsed_s, items=items, estimate_s=estimate, cuts=cuts)  # fmt: skip
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


def _of(rounds_ms) -> str:
    return f" (median of {', '.join(f'{x:.0f}' for x in rounds_ms)})" if len(rounds_ms) > 1 else ""


def lines(p: BuildPlan, law: Growth | None = None) -> list[str]:
    """The plan in words, as the build prints it before its first measured request."""
    cal = p.calibration
    budget = f"budget {duration(p.budget_s)} ({p.budget_from}); " if p.budget_s is not None else "no budget; "
    grew = "" if law is None else f"; at {law.users} users E2EL {law.e2el_ms:.0f} ms{_of(law.rounds_ms)}"
    out = [f"plan: {budget}estimate {duration(p.estimate_s)} from the calibration on, {duration(p.elapsed_before_s)} "
           "spent before it "
           f"(calibration request: E2EL {cal.e2el_ms:.0f} ms{_of(cal.rounds_ms)}, run start-up "
           f"{cal.startup_ms:.0f} ms{grew})"]  # fmt: skip
    out += [f"  {i.what}: {i.runs} × ~{duration(i.each_s)} = ~{duration(i.total_s)}" for i in p.items]
    out += [f"  cut: {c}" for c in p.cuts]
    return out
