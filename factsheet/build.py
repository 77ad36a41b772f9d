"""Assembly: spec → target → measurements (raw records kept) → factsheet."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

from factsheet import provenance as prov
from factsheet.progress import Bars, no_bars
from factsheet.schema import (
    AccuracySection,
    CapacitySection,
    EnergySection,
    Factsheet,
    Identity,
    LoadPointEntry,
    LoadSection,
    Provenance,
    RecordsFile,
    SystemSpec,
)
from factsheet.spec import BuildSpec
from factsheet.store import OutputDir
from probes.accuracy import AccuracyResult, load_dataset, run_humaneval
from probes.energy import EnergyMonitor, carbon_figures, energy_figures
from probes.load.capacity import find_capacity, point_runner
from probes.load.records import records_jsonl
from probes.load.runner import PointResult, run_point
from probes.measurement import NotMeasured
from probes.targets import LiveTarget, VllmTarget, open_target
from tuner import TuningResult, run_tuning

Log = Callable[[str], None]
NOT_REQUESTED = "not requested in the build spec"


class _Run:
    """State of one build: the spec, the live target, the output folder, what is measured so far."""

    def __init__(self, spec: BuildSpec, out: OutputDir, log: Log, bar: Bars):
        self.spec, self.out, self.log, self.bar = spec, out, log, bar
        self.live: LiveTarget | None = None
        self.monitor: EnergyMonitor | None = None
        self.idle = None
        self.host = prov.host_info()  # read once: the energy estimate and the system section share it


def build(
    spec: BuildSpec, spec_path: Path, spec_raw: bytes, out_dir: Path, log: Log = print, bar: Bars = no_bars
) -> Factsheet:
    started, t0 = prov.utc_now(), time.monotonic()
    out = OutputDir(out_dir)
    out.check_writable()
    run = _Run(spec, out, log, bar)
    _preflight(spec)
    log(f"target: {spec.target.kind} — starting / checking")
    with open_target(spec.target) as live, _energy_monitor(run):
        run.live = live
        log(f"target up at {live.base_url} (model {live.model})")
        if run.monitor is not None:
            log(f"energy: measuring idle power for {spec.energy.idle_s:g} s")
            run.idle = run.monitor.measure_idle(spec.energy.idle_s)
        points = _measure_load(run)
        capacity = _capacity(run)
        energy = _energy(run, points)
        accuracy = _accuracy(run)
        system = _system(run)
    tuning = _tuning(run)  # after the build's server is stopped
    return Factsheet(
        name=spec.name,
        identity=Identity(**spec.model.model_dump(), served_model=live.prepared_model),
        system=system,
        load=LoadSection(points=points, capacity=capacity),
        accuracy=accuracy,
        energy=energy,
        tuning=tuning,
        predictor=NotMeasured(reason="feature-model predictor not yet implemented in this tool version"),
        provenance=_provenance(spec_path, spec_raw, started, t0),
    )


def _preflight(spec: BuildSpec) -> None:
    """Inputs that can be checked before a server is started: fail in seconds, not after the load runs."""
    if spec.accuracy is not None:
        load_dataset(spec.accuracy.dataset)


@contextlib.contextmanager
def _energy_monitor(run: _Run):
    if run.spec.energy is None:
        yield
        return
    with EnergyMonitor(run.spec.energy) as monitor:
        run.monitor = monitor
        yield


def _measure_load(run: _Run) -> list[LoadPointEntry]:
    live, entries = run.live, []
    points = run.spec.load.load_points(live.supports_ignore_eos)
    for i, point in enumerate(points, 1):
        label = f"load {i}/{len(points)}: {point.label}"
        run.log(f"{label}, {point.num_requests} requests")
        result = asyncio.run(
            run_point(
                live.base_url,
                live.model,
                point,
                run.spec.load.slo,
                api_key=live.api_key,
                tokenizer_path=live.tokenizer_path,
                progress=run.bar(label),
            )
        )
        data = records_jsonl(result.records)
        records = run.out.records(f"load-{i:02d}.jsonl", data, len(result.records))
        entries.append(LoadPointEntry(result=result, records=records))
        run.out.measurement("load", entries)
        m = result.metrics
        run.log(
            f"  completed {m.completed}, failed {m.failed}, output {_fmt(m.output_throughput, '.1f')} tok/s, "
            f"ttft p50 {_fmt(m.ttft_ms.p(50), '.0f')} ms, e2el p99 {_fmt(m.e2el_ms.p(99), '.0f')} ms"
        )
    return entries


def _fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def _capacity(run: _Run) -> CapacitySection | NotMeasured:
    spec, live = run.spec.load.capacity, run.live
    if spec is None:
        return NotMeasured(reason=NOT_REQUESTED)
    template = run.spec.load.load_points(live.supports_ignore_eos)[0].model_copy(
        update={"num_requests": spec.num_requests}
    )
    runner = point_runner(
        live.base_url,
        live.model,
        template,
        run.spec.load.slo,
        knob=spec.knob,
        api_key=live.api_key,
        tokenizer_path=live.tokenizer_path,
    )
    records: list[RecordsFile] = []

    def probe(value: float) -> PointResult:
        label = f"capacity: {spec.knob} {value:g}"
        run.log(f"{label}, {spec.num_requests} requests")
        result = runner(value, run.bar(label))
        data = records_jsonl(result.records)
        records.append(run.out.records(f"capacity-{len(records) + 1:02d}.jsonl", data, len(result.records)))
        return result

    result = find_capacity(
        probe,
        run.spec.load.slo,
        knob=spec.knob,
        start=spec.start,
        max_value=spec.max_value,
        min_attainment=spec.min_attainment,
        tolerance=spec.tolerance,
        max_points=spec.max_points,
    )
    run.log(f"  capacity at SLO: {result.capacity} ({result.stop_reason})")
    section = CapacitySection(result=result, records=records)
    run.out.measurement("capacity", section)
    return section


def _energy(run: _Run, points: list[LoadPointEntry]) -> EnergySection | NotMeasured:
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
    section = EnergySection(energy=figures, carbon=carbon_figures(figures.energy_kwh(), run.spec.energy))
    run.out.measurement("energy", section)
    return section


def energy_point(points: list[LoadPointEntry]) -> LoadPointEntry | None:
    """Energy and performance from the same run: the steady window of the highest-load point."""
    return max(
        (p for p in points if p.result.window_epoch), key=lambda p: p.result.metrics.completed, default=None
    )


def _accuracy(run: _Run) -> AccuracySection | NotMeasured:
    if run.spec.accuracy is None:
        return NotMeasured(reason=NOT_REQUESTED)
    live = run.live
    run.log("accuracy: HumanEval+ generation and sandboxed evaluation")
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
    records = run.out.records("humaneval.jsonl", b"".join(lines), len(lines))
    section = AccuracySection(result=result, records=records)
    run.out.measurement("accuracy", section)
    return section


def _tuning(run: _Run) -> TuningResult | NotMeasured:
    """Runs after the build's own server is stopped: the tuner starts servers with its own flags."""
    if run.spec.tuning is None:
        return NotMeasured(reason=NOT_REQUESTED)
    run.log(f"tuning: SLO-Tuner, time budget {run.spec.tuning.time_budget_s:g} s")
    result = run_tuning(run.spec.target, run.spec.tuning, log=run.log)
    run.out.measurement("tuning", result)
    return result


def _system(run: _Run) -> SystemSpec:
    live, target = run.live, run.spec.target
    python = target.serving_python() if isinstance(target, VllmTarget) else None
    return SystemSpec(
        target_kind=live.kind,
        base_url=live.base_url if live.kind == "endpoint" else None,
        engine=live.engine or NotMeasured(reason="engine of an external endpoint is not visible to the tool"),
        host=run.host,
        python=prov.python_version(),
        libraries=prov.library_versions(),
        serving_libraries=prov.serving_library_versions(python),
    )


def _provenance(spec_path: Path, spec_raw: bytes, started: str, t0: float) -> Provenance:
    commit, dirty = prov.git_state()
    return Provenance(
        tool_version=prov.tool_version(),
        git_commit=commit,
        git_dirty=dirty,
        spec_file=str(spec_path),
        spec_sha256=prov.sha256_bytes(spec_raw),
        command=sys.argv,
        started_at=started,
        finished_at=prov.utc_now(),
        wall_time_s=round(time.monotonic() - t0, 2),
    )
