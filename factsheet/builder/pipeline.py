"""Assembly: spec → target → measurements (raw records kept) → factsheet."""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from factsheet.binding import (
    Context,
    accuracy_context,
    capacity_step_context,
    energy_context,
    load_point_context,
    server_scrapes_context,
    stated_host,
)
from factsheet.builder import budget
from factsheet.builder import provenance as prov
from factsheet.builder.checkpoint import Checkpoints, Key
from factsheet.builder.output_folder import OutputDir, prepare_output
from factsheet.builder.predictor import build_predictor
from factsheet.document.conformance import ConformanceSection
from factsheet.document.files import SCRAPES_SUFFIX
from factsheet.document.headline.figures import headline
from factsheet.document.plan import CALIBRATION_ROUNDS, BuildPlan
from factsheet.document.repeats import (
    CALIBRATION_BLOCK,
    SEED_RULE,
    RepeatRun,
    Repeats,
    run_seed,
    search_block,
)
from factsheet.document.rules import rule_set
from factsheet.document.schema import (
    SCHEMA_VERSION,
    AccuracySection,
    CapacitySection,
    ComparedWorkload,
    EnergySection,
    Factsheet,
    Identity,
    LoadPointEntry,
    LoadSection,
    Provenance,
    RecordsFile,
    SystemSection,
    energy_point,
)
from factsheet.document.stamp import tool_version, utc_now
from factsheet.spec.build import NOT_REQUESTED, BuildSpec, CapacitySpec
from probes.accuracy import AccuracyResult, load_dataset, run_humaneval
from probes.core.digests import sha256_bytes, sha256_json
from probes.core.files import check_output
from probes.core.isolation import FRESH_START, Isolation, warmed
from probes.core.measurement import Model, NotMeasured, shown
from probes.core.progress import Bars, duration, no_bars
from probes.energy import EnergyMonitor, carbon_figures, energy_figures
from probes.hostload import HostLoad, host_speed
from probes.load.capacity import (
    STEP_REPEATS_RULE,
    CapacityResult,
    narrow,
    point_runner,
    search_capacity,
    warm_up_point,
)
from probes.load.client import Endpoint
from probes.load.point import LoadPoint
from probes.load.records import records_jsonl
from probes.load.runner import PointResult, run_point
from probes.load.workers import check_split, resolve_workers
from probes.load.workers.ray_fleet import check_address
from probes.load.workloads.context import BuildContext
from probes.load.workloads.plan import merged_prompts
from probes.load.workloads.profiles import (
    SyntheticProfile,
    TraceProfile,
    WorkloadProfile,
)
from probes.load.workloads.registry import build_plan
from probes.load.workloads.workload import SystemPrompt
from probes.server_view import check_endpoint, scrapes_jsonl
from probes.targets import LiveTarget, VllmTarget, open_target
from probes.targets.conformance import check as preflight
from tuner import TuningResult, run_tuning

Log = Callable[[str], None]


class _Run:
    """State of one build: the spec, the live target, the output folder, what is measured so far."""

    def __init__(self, spec: BuildSpec, out: OutputDir, log: Log, bar: Bars, checkpoints: Checkpoints):
        self.spec, self.out, self.log, self.bar = spec, out, log, bar
        self.checkpoints = checkpoints
        self.target_id = ""  # digest of the target section and the weights served: part of every key
        self.live: LiveTarget | None = None
        self.monitor: EnergyMonitor | None = None
        self.idle = None
        self.plan: BuildPlan | NotMeasured | None = None  # before the first measured request (budget.py)
        self.plan_at = 0.0  # monotonic time the plan was made
        self.max_points: dict[str, int] = {}  # each capacity search's probes as the plan cut them
        self.cuts: list[str] = []  # what the budget cut, found as the build goes (a search's resolution)
        self.reserve: dict[str, float] = {}  # each search: the plan's estimate of everything after its probes
        self.budget_from = "load.budget_s"
        self.host = prov.host_info()  # read once: the energy estimate and the system section share it

    def left(self) -> str:
        """What remains in time by the plan, for a progress line."""
        if not isinstance(self.plan, BuildPlan):
            return ""
        spent = time.monotonic() - self.plan_at
        budget = self.plan.budget_s
        of = (
            ""
            if budget is None
            else f", {duration(max(budget - self.plan.elapsed_before_s - spent, 0))} of the budget"
        )
        left, planned = duration(max(self.plan.estimate_s - spent, 0)), duration(self.plan.estimate_s)
        return f" [plan: ≈ {left} left of the {planned} planned{of}]"


def build(
    spec: BuildSpec,
    spec_path: Path,
    spec_raw: bytes,
    out_dir: Path,
    log: Log = print,
    bar: Bars = no_bars,
    *,
    resume: bool = False,
    overwrite: bool = False,
    budget_s: float | None = None,
) -> Factsheet:
    """Measure what the spec asks. With `resume`, measurements checkpointed in `out_dir` by an earlier
    (interrupted) build of an unchanged spec section and target are reused; without it, a non-empty
    `out_dir` is refused (or, with `overwrite`, the earlier build's files are removed first)."""
    started, t0 = utc_now(), time.monotonic()
    check_output(out_dir)
    out = OutputDir(out_dir)
    prepare_output(out.root, resume=resume, overwrite=overwrite)
    if budget_s is not None:  # --budget wins over the spec's load.budget_s
        spec = spec.model_copy(update={"load": spec.load.model_copy(update={"budget_s": budget_s})})
    run = _Run(spec, out, log, bar, Checkpoints(out, resume=resume, log=log))
    run.budget_from = "--budget" if budget_s is not None else run.budget_from
    _preflight(spec)
    log(f"target: {spec.target.kind} — starting / checking")
    with open_target(spec.target) as live, _energy_monitor(run):
        run.live = live
        run.target_id = sha256_json([spec.target, live.prepared_model])
        log(f"target up at {live.base_url} (model {live.model})")
        _check_metrics_page(run)
        conformance = _conformance(run)  # before the first measured request: refused here (exit 2) when void
        run.plan_at = time.monotonic()
        run.plan = _plan(run, elapsed=run.plan_at - t0)
        # The workload joins the key only when the spec names one: older builds' checkpoints keep resuming.
        shape = [spec.load.slo, spec.load.server_view, *_workload_key(spec), *_workers_key(spec)]
        point_keys = [_key(run, p, *shape) for p in spec.load.load_points(live.supports_ignore_eos)]
        energy_key = _key(run, spec.energy, [k["spec"] for k in point_keys])
        energy = _reused_energy(run, energy_key)
        if run.monitor is not None and energy is None:
            log(f"energy: measuring idle power for {spec.energy.idle_s:g} s{run.left()}")
            run.idle = run.monitor.measure_idle(spec.energy.idle_s)
        # Energy rests on the monitor's window over a load point: without its checkpoint, the points run again.
        points = _measure_load(run, point_keys, reuse=spec.energy is None or energy is not None)
        energy = energy or _energy(run, points, energy_key)
        capacity = _capacity(run)
        compared = _compared_workloads(run)
        accuracy = _accuracy(run)
        system = _system(run, spec_path.parent)
    tuning = _tuning(run)  # after the build's server is stopped
    _close_plan(run)
    if resume:
        log(run.checkpoints.summary())
        for stale in run.checkpoints.remove_stale():
            log(f"resume: removed {stale} (not part of this build)")
    sheet = Factsheet(
        rules=rule_set(SCHEMA_VERSION).ids,
        name=spec.name,
        plan=run.plan,
        identity=Identity(
            **spec.model.model_dump(), served_model=prov.recorded_model(live.prepared_model, spec_path.parent)
        ),
        governance=spec.governance,
        system=system,
        conformance=conformance,
        load=LoadSection(
            points=points,
            capacity=capacity,
            rationale=spec.load.rationale,
            compared_workloads=compared,
            seed_rule=SEED_RULE,
        ),
        accuracy=accuracy,
        energy=energy,
        tuning=tuning,
        predictor=build_predictor(spec.predictor, out_dir, log),  # after the build's server is stopped
        provenance=_provenance(spec_path, spec_raw, started, t0),
    )
    return sheet.model_copy(update={"headline": headline(sheet)})  # page 1's figures, from the sheet itself


def _close_plan(run: _Run) -> None:
    """The plan as kept: the time the build took after planning, and what the budget cut."""
    if isinstance(run.plan, BuildPlan):
        taken = round(time.monotonic() - run.plan_at, 2)
        budget_s, ended_s = run.plan.budget_s, run.plan.elapsed_before_s + taken
        # the parts the plan keeps, or a probe, ran past their estimate
        if budget_s is not None and ended_s > budget_s:
            run.cuts.append(f"over budget: the measurements ended at {ended_s:.1f} s of {budget_s:g} s")
            run.log(f"  {run.cuts[-1]}")
        run.plan = run.plan.model_copy(update={"taken_s": taken, "cuts": run.plan.cuts + run.cuts})
        run.log(f"plan: estimated {duration(run.plan.estimate_s)}, took {duration(taken)}")


def _check_metrics_page(run: _Run) -> None:
    """A /metrics page that is not Prometheus text stops the build before anything is measured (exit 2);
    a target without one is measured without the server view (each point says why)."""
    live = run.live
    if run.spec.load.server_view.scrape:
        missing = check_endpoint(
            live.base_url, {"Authorization": f"Bearer {live.api_key}"} if live.api_key else {}
        )
        if missing is not None:
            offer = f" ({live.identity.metrics})" if live.identity is not None else ""
            run.log(f"server view: not measured: {missing.reason}{offer}")


def _conformance(run: _Run) -> ConformanceSection:
    """The conformance preflight on the load's endpoint: a server that would void the measurement is refused
    with the remedy (exit 2); a milder deviation is measured, logged and stated in the factsheet."""
    live = run.live
    endpoint = Endpoint(
        live.base_url, live.model, run.spec.load.endpoint, live.api_key, live.supports_ignore_eos
    )
    identity = live.identity
    found = preflight(endpoint, identity, live.tokenizer_path, live.supports_ignore_eos)
    run.log(
        f"engine: {identity.label} {identity.version or '(no version stated)'}; model id sent: {live.model}"
    )
    for note in identity.notes:
        run.log(f"target: {note}")
    for c in found.deviations():
        run.log(f"conformance: {c.name}: {c.detail}")
    return found


def _scrapes(run: _Run, records_name: str, result: PointResult, measured_in: Context):
    """The run's /metrics scrapes beside its request records, bound to the same run; None when none."""
    if not isinstance(result.scrapes, list):
        return None
    view = run.spec.load.server_view
    return run.checkpoints.records(
        records_name.removesuffix(".jsonl") + SCRAPES_SUFFIX,
        scrapes_jsonl(result.scrapes),
        len(result.scrapes),
        server_scrapes_context(measured_in, view.interval_s, view.stop_when_saturated),
    )


def _preflight(spec: BuildSpec) -> None:
    """Inputs that can be checked before a server is started: fail in seconds, not after the load runs."""
    if spec.accuracy is not None:
        load_dataset(spec.accuracy.dataset)
    points = spec.load.load_points(True)  # a trace is read (and checked line by line) here
    plan = build_plan(
        _profile(spec), BuildContext(1, spec.load.seed, points[0].input_len, points[0].output_len)
    )
    workers = _workers_of(spec)
    for point in points:
        if plan.sessions is not None and workers > 1:
            # a chat-sessions point is split by whole sessions: how many its count makes is that plan's
            ctx = BuildContext(point.num_requests, point.seed, point.input_len, point.output_len)
            check_split(point, build_plan(_profile(spec), ctx), workers, "load.workers")
        else:
            check_split(point, plan, workers, "load.workers")
    if spec.load.executor == "ray" and spec.load.ray_address:
        check_address(spec.load.ray_address)


def _workload_key(spec: BuildSpec) -> list:
    return [spec.load.workload] if spec.load.workload else []


def _workers_key(spec: BuildSpec) -> list:
    # Joins the key only when the load is split: one worker's checkpoints keep resuming as before.
    load = spec.load
    if load.workers == 1 and load.executor == "processes":
        return []
    return [{"workers": load.workers, "executor": load.executor, "ray_address": load.ray_address}]


def _workers_of(spec: BuildSpec) -> int:
    return resolve_workers(spec.load.workers, "load.workers", spec.load.executor)


def _workers(run: _Run) -> dict:
    load = run.spec.load
    return {"workers": _workers_of(run.spec), "executor": load.executor, "ray_address": load.ray_address}


def _profile(spec: BuildSpec) -> WorkloadProfile:
    return spec.load.workload or SyntheticProfile()


@contextlib.contextmanager
def _energy_monitor(run: _Run):
    if run.spec.energy is None:
        yield
        return
    with EnergyMonitor(run.spec.energy) as monitor:
        run.monitor = monitor
        yield


def _key(run: _Run, *section: object) -> Key:
    """What a measurement depends on: its spec section (and inputs), and the target's identity."""
    return {"spec": sha256_json(list(section)), "target": run.target_id}


def _reused_energy(run: _Run, key: Key) -> EnergySection | None:
    if run.spec.energy is None:
        return None
    return run.checkpoints.reuse("energy", key, EnergySection, "energy")


def _measure_load(run: _Run, keys: list[Key], *, reuse: bool) -> list[LoadPointEntry]:
    live, entries = run.live, []
    points = run.spec.load.load_points(live.supports_ignore_eos)
    if run.checkpoints.resume and not reuse:
        run.log("resume: load points measured again (the energy figures need the monitor over their window)")
    for i, (point, key) in enumerate(zip(points, keys, strict=True), 1):
        label = f"load {i}/{len(points)}: {point.label}"
        name = f"load-{i:02d}"
        saved = run.checkpoints.reuse(name, key, LoadPointEntry, label) if reuse else None
        if saved is not None:
            entries.append(saved)
            continue
        run.log(f"{label}, {point.num_requests} requests{run.left()}")
        result = asyncio.run(
            run_point(
                live.base_url,
                live.model,
                point,
                run.spec.load.slo,
                api_key=live.api_key,
                tokenizer_path=live.tokenizer_path,
                progress=run.bar(label),
                profile=_profile(run.spec),
                server_view=run.spec.load.server_view,
                server_pid=live.server_pid,
                **_workers(run),
            )
        )
        data = records_jsonl(result.records)
        context = load_point_context(result)
        records = run.checkpoints.records(f"load-{i:02d}.jsonl", data, len(result.records), context)
        scrapes = _scrapes(run, f"load-{i:02d}.jsonl", result, context)
        entry = LoadPointEntry(
            result=result, records=records, server_records=scrapes, host_load=result.host_load
        )
        entries.append(entry)
        run.checkpoints.save(name, key, entries[-1], label)
        m = result.metrics
        run.log(
            f"  completed {m.completed}, failed {m.failed}, output {_fmt(m.output_throughput, '.1f')} tok/s, "
            f"ttft p50 {_fmt(m.ttft_ms.p(50), '.0f')} ms, e2el p99 {_fmt(m.e2el_ms.p(99), '.0f')} ms"
        )
    return entries


def _fmt(value: float | None, spec: str) -> str:
    return shown(value, spec)


def _plan(run: _Run, elapsed: float) -> BuildPlan | NotMeasured:
    """The plan before the first measured request: a calibration request, each part's estimate, each
    capacity search's probes cut to the budget (factsheet/document/plan.py). The plan runs from the
    calibration's start (`run.plan_at`): the calibration is its first part, as taken."""
    spec, live = run.spec, run.live
    if isinstance(_profile(spec), TraceProfile):
        why = "a trace workload: its requests come from its file, so there is no shape to calibrate, no plan"
        run.log(f"plan: {why}")
        return NotMeasured(reason=why)
    points = spec.load.load_points(live.supports_ignore_eos)
    template = points[0].model_copy(update={"seed": run_seed(spec.load.seed, CALIBRATION_BLOCK, 0)})
    # The calibration runs as every run does (server view, host load, workers), so its start-up is theirs.
    cal = budget.calibrate(live.base_url, live.model, template, slo=spec.load.slo, api_key=live.api_key,
                           tokenizer_path=live.tokenizer_path, profile=_profile(spec),
                           server_view=spec.load.server_view, server_pid=live.server_pid, **_workers(run))  # fmt: skip
    if isinstance(cal, NotMeasured):
        run.log(f"plan: {cal.reason}")
        return cal
    searches = (
        [budget.PlannedSearch(spec.load.capacity, _profile(spec), "capacity")] if spec.load.capacity else []
    )
    searches += [budget.PlannedSearch(c.capacity, c.workload, f"capacity {c.workload.profile}")
                 for c in spec.load.compared_workloads]  # fmt: skip
    law = _growth(run, template, cal, searches)
    calibrated_s = time.monotonic() - run.plan_at
    # A repeat after a fresh start of the server the tool started costs a start, as the build's own did, and a
    # warm-up round (WARM_UP_RULE).
    fresh = isinstance(spec.target, VllmTarget)
    given = spec.load.budget_s
    built, counts = budget.plan(spec, cal, searches, points, elapsed_s=elapsed, isolation_s=elapsed if fresh else 0.0,
                                budget_s=given, budget_from=run.budget_from if given else None, law=law,
                                warm_up=fresh, calibrated_s=calibrated_s)  # fmt: skip
    run.max_points = {s.what: n for s, n in zip(searches, counts, strict=True)}
    probe_items = [i for i, item in enumerate(built.items) if item.what.endswith(": search probes")]
    run.reserve = {s.what: sum(item.total_s for item in built.items[i + 1 :])
                   for s, i in zip(searches, probe_items, strict=True)}  # fmt: skip
    for line in budget.lines(built, law):
        run.log(line)
    return built


def _growth(
    run: _Run, template: LoadPoint, cal, searches: list[budget.PlannedSearch]
) -> budget.Growth | None:
    """The calibration's second round, three doublings up the first closed-loop search's path (its start × 8,
    at most its max_value, 4 users a worker at least): how latency grows with load where the search's bracket
    is likely to lie, queueing included, for the plan's estimate of the searches (none without such a search)."""
    live, spec = run.live, run.spec
    closed = [s.spec for s in searches if s.spec.knob == "concurrency"]
    if not closed:
        return None
    workers = _workers(run)
    reach = min(closed[0].start * budget.GROWTH_ROUND, closed[0].max_value or math.inf)
    users = max(int(reach), 4 * workers.get("workers", 1))
    return budget.calibrate_load(live.base_url, live.model, template, cal, users, slo=spec.load.slo,
                                 api_key=live.api_key, tokenizer_path=live.tokenizer_path, profile=_profile(spec),
                                 server_view=spec.load.server_view, server_pid=live.server_pid, **workers)  # fmt: skip


def _capacity(run: _Run) -> CapacitySection | NotMeasured:
    """The load section's capacity search, on the first load point's shape and the section's workload."""
    spec = run.spec.load.capacity
    if spec is None:
        return NotMeasured(reason=NOT_REQUESTED)
    first = run.spec.load.load_points(run.live.supports_ignore_eos)[0]  # as the factsheet states it
    depends_on = sha256_json([spec, *_workload_key(run.spec)])
    search = _Search(spec, first, _profile(run.spec), "capacity", depends_on)
    return _search_capacity(run, search)


def _compared_workloads(run: _Run) -> list[ComparedWorkload]:
    """Capacity at SLO for each compared workload profile, on the same target, SLO, seed and knob."""
    out = []
    for k, compared in enumerate(run.spec.load.compared_workloads):
        template = run.spec.load.compared_template(compared, run.live.supports_ignore_eos)
        name = compared.workload.profile
        search = _Search(
            compared.capacity, template, compared.workload, f"capacity-{name}", sha256_json([compared]),
            what=f"capacity {name}", bound_workload=compared.workload, block=search_block(k),
        )  # fmt: skip
        out.append(
            ComparedWorkload(
                workload=compared.workload, template=template, capacity=_search_capacity(run, search)
            )
        )
    return out


@dataclass(frozen=True)
class _Search:
    """One capacity search of a build: its spec, the shape every probe takes (`template`), the workload it
    sends, the stem of its records and checkpoints, and what its checkpoints depend on beyond each step
    (the target joins in `_key`)."""

    spec: CapacitySpec
    template: LoadPoint
    profile: WorkloadProfile
    stem: str
    depends_on: str  # digest of its spec section (and the workload the load section names)
    what: str = "capacity"
    bound_workload: WorkloadProfile | None = None  # a compared workload's records also bind its profile
    block: int = 1  # its runs' seed block (SEED_RULE): 1 the load section's search, 2 + k compared one k's


@dataclass
class _Steps:
    """What a capacity search has recorded so far, in probing order (its repeats apart)."""

    records: list[RecordsFile] = field(default_factory=list)
    scrapes: list[RecordsFile | None] = field(default_factory=list)
    loads: list[HostLoad | NotMeasured | None] = field(default_factory=list)  # the host's load over each
    seeds: list[int] = field(default_factory=list)
    rates: dict[float, float | None] = field(default_factory=dict)  # value -> its search probe's req/s
    prompts: list[list[SystemPrompt] | None] = field(default_factory=list)  # each run's system prompts

    def add(self, entry: LoadPointEntry, seed: int) -> None:
        self.records.append(entry.records)
        self.scrapes.append(entry.server_records)
        self.loads.append(entry.host_load)
        self.seeds.append(seed)
        self.prompts.append(entry.result.workload.system_prompts)


def _search_capacity(run: _Run, search: _Search) -> CapacitySection:
    spec, steps, isolations = search.spec, _Steps(), []

    # each search probe as timed, for the budget's check before the next
    made_probes: list[budget.ProbeTime] = []

    def more(made: int, value: float) -> bool:
        """Whether the budget leaves another search probe, at `value` (budget.next_probe_s), and everything
        planned after."""
        budget_s = run.spec.load.budget_s
        if (
            budget_s is None
            or made < budget.MIN_POINTS
            or not made_probes
            or not isinstance(run.plan, BuildPlan)
        ):
            return True
        spent = run.plan.elapsed_before_s + (time.monotonic() - run.plan_at)
        next_s = budget.next_probe_s(made_probes, value, spec.knob,
                                     spec.requests_at(spec.num_requests, value, search.profile))  # fmt: skip
        return spent + next_s + run.reserve.get(search.what, 0.0) <= budget_s

    def prober(requests: int, kind: str) -> Callable[[float], PointResult | _Isolated]:
        def probe(value: float) -> PointResult | _Isolated:
            # The search is deterministic given its results: a resumed build replays its checkpoints.
            position = len(steps.records)
            seed = run_seed(run.spec.load.seed, search.block, position)
            at = _StepAt(kind, spec.requests_at(requests, value, search.profile), value, position, seed)
            if kind == "repeat":
                entry, isolation = _isolated_step(run, search, at, steps.rates)
                isolations.append(isolation)
                steps.add(entry, seed)
                return _Isolated(entry.result, isolation)
            began = time.monotonic()
            entry = _step(run, search, at, steps.rates)
            if kind == "probe":
                made_probes.append(budget.ProbeTime(at.value, at.requests, time.monotonic() - began))
            steps.add(entry, seed)
            return entry.result

        return probe

    confirm = spec.confirm_requests
    each = f" of {spec.repeats} runs each" if spec.repeats > 1 else ""
    then = (
        f", then up to {spec.max_confirmations} confirmation step(s){each} of {confirm} requests"
        if confirm
        else ""
    )
    cap = f"up to the cap {spec.max_value:g}" if spec.max_value is not None else "until a clear fail"
    run.log(f"{search.what} at SLO: at most {run.max_points.get(search.what, spec.max_points)} probes of {spec.num_requests} requests, doubling "
            f"{cap}{then}")  # fmt: skip
    params = spec.search_parameters()
    points = run.max_points.get(search.what, params.max_points)
    if points != params.max_points:
        params = params.model_copy(update={"max_points": points})  # stated as run: validate replays it
    result, further = search_capacity(
        prober(spec.num_requests, "probe"),
        run.spec.load.slo,
        params,
        knob=spec.knob,
        min_attainment=spec.min_attainment,
        confirm=prober(confirm, "confirmation") if confirm else None,
        repeat=prober(confirm, "repeat") if confirm and spec.repeats > 1 else None,
        more=more,
    )
    _state_cuts(run, search, result, points)
    low, high = result.range
    run.log(
        f"  {search.what} at SLO: {result.capacity}, bracket [{_fmt(result.bracket[0], 'g')}, "
        f"{_fmt(result.bracket[1], 'g')}) ({result.stop_reason}); range [{_fmt(low, 'g')}, {_fmt(high, 'g')})"
    )
    n = len(result.points)  # the runs after the points: the repeats of the step that held
    repeats = _repeats(run, search, steps, isolations, further, n)
    return CapacitySection(
        result=result, records=steps.records[:n], server_records=steps.scrapes[:n], host_load=steps.loads[:n],
        seeds=steps.seeds[:n], repeats=repeats, system_prompts=merged_prompts(steps.prompts),
    )  # fmt: skip


def _state_cuts(run: _Run, search: _Search, result: CapacityResult, points: int) -> None:
    """What the budget cut from this search, stated and logged: probes not made, and the bracket's
    resolution when the search stopped before it narrowed."""
    spec = search.spec
    if result.search.max_points < points:
        run.cuts.append(
            f"{search.what}: stopped after {result.search.max_points} probes, not {points}: budget"
        )
        run.log(f"  cut: {run.cuts[-1]}")
    lo, hi = result.bracket
    if (
        result.search.max_points < spec.max_points
        and lo is not None
        and hi is not None
        and not narrow(spec.knob, lo, hi, spec.tolerance)
    ):
        unit = "users" if spec.knob == "concurrency" else "req/s"
        aim = "1" if spec.knob == "concurrency" else f"{spec.tolerance:g} × {lo:g}"
        run.cuts.append(f"{search.what}: resolution {hi - lo:g} {unit}, not {aim}: budget")
        run.log(f"  cut: {run.cuts[-1]}")


def _repeats(
    run: _Run, search: _Search, steps: _Steps, isolations: list, further: list, n: int
) -> Repeats | None:
    """The repeats of the confirmation step that held (its first run is the last point), or None without
    repeats in the spec."""
    spec = search.spec
    if spec.repeats <= 1:
        return None
    of = n - 1 if further else None
    runs = [
        RepeatRun(
            point=p,
            seed=steps.seeds[n + j],
            isolation=isolations[-len(further) + j],
            records=steps.records[n + j],
            server_records=steps.scrapes[n + j],
            host_load=steps.loads[n + j],
            system_prompts=steps.prompts[n + j],
        )  # fmt: skip
        for j, p in enumerate(further)
    ]
    if of is None:
        run.log(f"  {search.what}: no confirmation step held, so no repeats of the headline run")
    return Repeats(k=spec.repeats, of=of, runs=runs, answer_rule=STEP_REPEATS_RULE)


@dataclass(frozen=True)
class _Isolated:
    """A further run of a confirmation step, in the shape the pass rule judges, with what isolated it."""

    result: PointResult
    isolation: Isolation

    def __getattr__(self, name: str):
        return getattr(self.result, name)


def _isolated_step(
    run: _Run, search: _Search, at: _StepAt, rates: dict[float, float | None]
) -> tuple[LoadPointEntry, Isolation]:
    """A further run of a confirmation step: after an isolation (a fresh start of the server the tool started,
    else a prefix-cache reset asked of the endpoint); a resumed build reuses its checkpoint, isolation and all."""
    label = f"{search.what} repeat: {search.spec.knob} {at.value:g}"
    name, key = f"{search.stem}-repeat-{at.position + 1:02d}", _capacity_key(run, search, at)
    saved = run.checkpoints.reuse(name, key, _IsolatedEntry, label)
    if saved is not None:
        return saved.entry, saved.isolation
    isolation = run.live.isolate()
    if isolation.method == FRESH_START and isolation.done:
        isolation = _warm_up(run, search, at, isolation)
    run.log(f"{label}: {isolation.method}: {isolation.detail}")
    entry = _step(run, search, at, rates)
    run.checkpoints.save(name, key, _IsolatedEntry(entry=entry, isolation=isolation), label)
    return entry, isolation


def _warm_up(run: _Run, search: _Search, at: _StepAt, isolation: Isolation) -> Isolation:
    """The warm-up round after a fresh start (WARM_UP_RULE), its answers discarded: the isolation stated with it."""
    live, knob = run.live, search.spec.knob
    # The calibration's block, past its rounds: no measured run draws these prompts, so none meets a prefix
    # they warmed.
    seed = run_seed(run.spec.load.seed, CALIBRATION_BLOCK, CALIBRATION_ROUNDS + at.position)
    point = warm_up_point(search.template, knob, at.value, seed, search.profile)
    load = f"concurrency {point.concurrency}" if knob == "concurrency" else f"{at.value:g} req/s"
    result = asyncio.run(
        run_point(live.base_url, live.model, point, run.spec.load.slo, api_key=live.api_key,
                  tokenizer_path=live.tokenizer_path, profile=search.profile, server_pid=live.server_pid,
                  **_workers(run))
    )  # fmt: skip
    return warmed(isolation, point.num_requests, load, result.metrics.failed)


class _IsolatedEntry(Model):
    """A confirmation step's further run as checkpointed: its entry and what isolated it."""

    entry: LoadPointEntry
    isolation: Isolation


@dataclass(frozen=True)
class _StepAt:
    """One run of a capacity search: its kind (probe, confirmation, repeat), size, value, place and seed."""

    kind: str
    requests: int
    value: float
    position: int
    seed: int


def _step(run: _Run, search: _Search, at: _StepAt, rates: dict[float, float | None]) -> LoadPointEntry:
    """One run of a search at `at.value`: its checkpoint when resuming, else measured, its records bound to
    the step (its place, kind and seed) and checkpointed."""
    spec, live = search.spec, run.live
    label = f"{search.what} {at.kind}: {spec.knob} {at.value:g}"
    name = f"{search.stem}-{at.position + 1:02d}"
    template = search.template.model_copy(update={"num_requests": at.requests, "seed": at.seed})
    key = _capacity_key(run, search, at)
    saved = run.checkpoints.reuse(name, key, LoadPointEntry, label)
    if saved is not None:
        return saved
    run.log(f"{label}, {at.requests} requests{_expected(rates.get(at.value), at.requests)}{run.left()}")
    runner = point_runner(
        live.base_url, live.model, template, run.spec.load.slo, knob=spec.knob, api_key=live.api_key,
        tokenizer_path=live.tokenizer_path, profile=search.profile, server_view=run.spec.load.server_view,
        server_pid=live.server_pid, **_workers(run),
    )  # fmt: skip
    # The runs `factsheet diff` compares between builds (a repeated step's) carry the host's speed, timed just
    # before them.
    speed = host_speed() if at.kind != "probe" and spec.repeats > 1 else None
    result = runner(at.value, run.bar(label))
    if speed is not None and isinstance(result.host_load, HostLoad):
        result.host_load = result.host_load.model_copy(update={"speed": speed})
    if at.kind == "probe":
        rates.setdefault(at.value, result.metrics.request_throughput)
    context = capacity_step_context(
        spec.knob,
        at.value,
        at.position,
        confirmation=at.kind != "probe",
        template=search.template.model_copy(update={"seed": at.seed}),
        slo=run.spec.load.slo,
        workload=search.bound_workload,
        repeats=spec.repeats,
        **stated_host(result.host_load),
    )
    records = run.checkpoints.records(
        f"{name}.jsonl", records_jsonl(result.records), len(result.records), context
    )
    scrapes = _scrapes(run, f"{name}.jsonl", result, context)
    entry = LoadPointEntry(result=result, records=records, server_records=scrapes, host_load=result.host_load)
    run.checkpoints.save(name, key, entry, label)
    return entry


def _capacity_key(run: _Run, search: _Search, at: _StepAt) -> Key:
    """What a capacity step's checkpoint depends on: the search (its spec, and the workload when the spec
    names one), its template point, the SLO, scraping and the step (kind, size, value, seed)."""
    load = run.spec.load
    return _key(
        run, search.depends_on, search.template, load.slo, load.server_view, at.kind, at.requests, at.value,
        at.seed,
    )  # fmt: skip


def _expected(rate: float | None, requests: int) -> str:
    """How long a run of `requests` takes at `rate` req/s (the search probe's at the same value): said
    before a confirmation starts, so a reader knows the longest step's length before its bar has a rate."""
    if not rate:
        return ""
    return f", about {duration(requests / rate)} at its search probe's {rate:.3g} req/s"


def _energy(run: _Run, points: list[LoadPointEntry], key: Key) -> EnergySection | NotMeasured:
    if run.spec.energy is None:
        return NotMeasured(reason=NOT_REQUESTED)
    entry = energy_point(points)
    if entry is None:
        return NotMeasured(reason="no load point completed a request, so there is no steady window")
    result: PointResult = entry.result
    run.monitor.sample()  # a reading after the window's end, so its edge is covered
    window = run.monitor.window(*result.window_epoch)
    figures = energy_figures(
        window,
        run.idle,
        requests=result.metrics.completed,
        output_tokens=result.metrics.total_output_tokens,
        config=run.spec.energy,
        cpu_model=run.host.cpu_model,
    )
    samples = run.monitor.samples()
    data = b"".join(c.model_dump_json().encode() + b"\n" for c in samples)
    section = EnergySection(
        energy=figures,
        carbon=carbon_figures(figures.energy_kwh(), run.spec.energy),
        records=run.checkpoints.records(
            "energy-samples.jsonl", data, len(samples), energy_context(figures, result)
        ),
    )
    run.checkpoints.save("energy", key, section, "energy")
    return section


def _accuracy(run: _Run) -> AccuracySection | NotMeasured:
    if run.spec.accuracy is None:
        return NotMeasured(reason=NOT_REQUESTED)
    live, key = run.live, _key(run, run.spec.accuracy)
    saved = run.checkpoints.reuse("accuracy", key, AccuracySection, "accuracy")
    if saved is not None:
        return saved
    run.log(f"accuracy: HumanEval+ generation and sandboxed evaluation{run.left()}")
    result: AccuracyResult = asyncio.run(
        run_humaneval(
            f"{live.base_url}/v1",
            live.model,
            run.spec.accuracy,
            api_key=live.api_key,
            progress=run.bar("HumanEval+ generation"),
        )
    )
    lines = [t.model_dump_json().encode() + b"\n" for t in result.per_task]
    records = run.checkpoints.records(
        "humaneval.jsonl", b"".join(lines), len(lines), accuracy_context(result)
    )
    section = AccuracySection(result=result, records=records)
    run.checkpoints.save("accuracy", key, section, "accuracy")
    return section


def _tuning(run: _Run) -> TuningResult | NotMeasured:
    """Runs after the build's own server is stopped: the tuner starts servers with its own flags."""
    if run.spec.tuning is None:
        return NotMeasured(reason=NOT_REQUESTED)
    key = _key(run, run.spec.tuning)
    saved = run.checkpoints.reuse("tuning", key, TuningResult, "tuning")
    if saved is not None:
        return saved
    run.log(f"tuning: SLO-Tuner, time budget {run.spec.tuning.time_budget_s:g} s")
    bar = run.bar(f"tuning (seconds of its {run.spec.tuning.time_budget_s:g} s budget)")
    result = run_tuning(run.spec.target, run.spec.tuning, log=run.log, progress=bar)
    run.checkpoints.save("tuning", key, result, "tuning")
    return result


def _system(run: _Run, spec_dir: Path) -> SystemSection:
    live, target = run.live, run.spec.target
    python = target.serving_python() if isinstance(target, VllmTarget) else None
    engine = prov.recorded_engine(live.engine, spec_dir) if live.engine is not None else None
    return SystemSection(
        target_kind=live.kind,
        base_url=live.base_url if live.kind == "endpoint" else None,
        engine=engine
        or NotMeasured(
            reason="an external endpoint's engine process is not the tool's: its command and environment are not "
            "visible (the engine found from its answers: the conformance section)"
        ),
        host=run.host,
        python=prov.python_version(),
        libraries=prov.library_versions(),
        serving_libraries=prov.serving_library_versions(python),
        deployment=live.deployment,
    )


def _provenance(spec_path: Path, spec_raw: bytes, started: str, t0: float) -> Provenance:
    commit, dirty = prov.git_state()
    return Provenance(
        tool_version=tool_version(),
        git_commit=commit,
        git_dirty=dirty,
        spec_file=spec_path.name,
        spec_sha256=sha256_bytes(spec_raw),
        command=prov.recorded_command(sys.argv, spec_path.parent),
        started_at=started,
        finished_at=utc_now(),
        wall_time_s=round(time.monotonic() - t0, 2),
    )
