"""The contexts raw records are bound to, each built from what the factsheet states about it.

A context holds what the records were measured *under* and cannot show by themselves: the settings of the
load point (label, concurrency or rate, lengths, arrival process), the SLO they are judged by, when the run
started, the place of a capacity probe in the search, what an accuracy run evaluated. The build writes the
digest of the context into the records file's header; `validate` recomputes it from the factsheet, so a
changed setting or label, or one point's records reused for another, no longer matches.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from factsheet.document.schema import SCHEMA_VERSION
from probes.accuracy import AccuracyResult
from probes.accuracy.dataset import DatasetInfo
from probes.core.digests import sha256_json
from probes.core.measurement import Model, NotMeasured
from probes.energy import EnergyResult
from probes.hostload import HostLoad
from probes.load.capacity import Knob
from probes.load.point import SLO, LoadPoint
from probes.load.runner import PointResult
from probes.load.workloads.profiles import WorkloadProfile


class LoadPointContext(Model):
    role: Literal["load point"] = "load point"
    label: str
    point: LoadPoint = Field(description="every setting of the point (concurrency/rate, lengths, arrivals)")
    slo: SLO
    started_at: float = Field(description="epoch seconds of the run's time origin")


class CapacityStepContext(Model):
    role: Literal["capacity step"] = "capacity step"
    knob: Knob
    value: float
    position: int = Field(description="0-based place in the probing order")
    confirmation: bool = Field(description="a confirmation run, not a search probe")
    template: LoadPoint = Field(description="the first load point's settings, which every probe takes")
    slo: SLO
    repeats: int | None = Field(
        None,
        description="the runs the build asked for of its headline run (the spec's repeats, "
        "1: none; None: an older step): so a document that leaves its repeats out (a failed one hidden) "
        "no longer matches its search's records",
    )
    host_speed_ms: float | None = Field(
        None,
        description="the host-speed kernel's time before the run (a repeated step's runs; None: not timed): "
        "bound, as `factsheet diff` states it beside the runs, so a document that restates it no longer "
        "matches its records",
    )
    server_share: float | None = Field(
        None,
        description="the server's share of the host's CPU over the run, where its host speed is timed (None: "
        "not timed, or the server not found): bound with the host speed, as what tells a CPU-served run "
        "from one whose work is elsewhere",
    )

    @model_serializer(mode="wrap")
    def _older_steps_unchanged(self, handler: SerializerFunctionWrapHandler) -> dict:
        """An older step states no `repeats` nor host speed: left out, so its digest is the one its build
        wrote."""
        data = handler(self)
        for name in ("repeats", "host_speed_ms", "server_share"):
            if data.get(name) is None:
                data.pop(name, None)
        return data


class WorkloadCapacityStepContext(CapacityStepContext):
    """A step of a compared workload's capacity search: the capacity step's context (its
    `template` the settings of that workload's probes) and the profile it sent, so one profile's records
    cannot stand for another's."""

    role: Literal["workload capacity step"] = "workload capacity step"
    workload: WorkloadProfile


class AccuracyContext(Model):
    role: Literal["accuracy"] = "accuracy"
    benchmark: str
    dataset: DatasetInfo = Field(description="identity and sha256 of the dataset file")
    tests_run: list[str]
    mode: str
    prompting: str
    subset: str = Field(description="which tasks ran")
    temperature: float
    sampling: dict[str, float | int | bool | str]
    max_tokens: int
    n_samples_per_task: int


class EnergyContext(Model):
    role: Literal["energy counters"] = "energy counters"
    window: tuple[float, float] = Field(description="the measured window, epoch seconds")
    idle_window: tuple[float, float] | None = Field(description="the idle measurement's window, if any")
    load_point: str = Field(description="context digest of the load point whose steady window it covers")


class ServerScrapesContext(Model):
    """A run's /metrics scrapes: bound to the run whose request records they accompany."""

    role: Literal["server scrapes"] = "server scrapes"
    run: str = Field(
        description="context digest of the load point or capacity step the scrapes were taken in"
    )
    interval_s: float = Field(description="seconds between scrapes")
    stop_when_saturated: bool


Context = (
    LoadPointContext
    | CapacityStepContext
    | WorkloadCapacityStepContext
    | AccuracyContext
    | EnergyContext
    | ServerScrapesContext
)
ROLES = (
    "load point",
    "capacity step",
    "workload capacity step",
    "accuracy",
    "energy counters",
    "server scrapes",
)
FORMAT = "llm-factsheet records"


class RecordsHeader(Model):
    """The header line's content. The context is written out in full so that a mismatch can be named field
    by field; the digest is what binds (it must be the digest of that context, and of the one stated)."""

    format: Literal["llm-factsheet records"] = FORMAT
    role: str = Field(description="what the records belong to: one of ROLES")
    context_sha256: str = Field(description="sha256 of the canonical JSON of the context")
    context: Annotated[Context, Field(discriminator="role")]
    schema_version: str | None = Field(
        None,
        description="the factsheet schema of the tool that wrote the records (None: an "
        "older tool's): a document stating a lower one was relabelled (rule records/writer)",
    )


class HeaderLine(Model):
    header: RecordsHeader


def header_line(context: Context) -> bytes:
    """The first line of a records file measured in `context`."""
    header = RecordsHeader(
        role=context.role,
        context_sha256=context_digest(context),
        context=context,
        schema_version=SCHEMA_VERSION,
    )
    return HeaderLine(header=header).model_dump_json().encode() + b"\n"


def parse_header(line: bytes) -> RecordsHeader:
    """The header of a records file; ValueError (pydantic's included) when it is not a valid one."""
    return HeaderLine.model_validate_json(line).header


def context_digest(context: Context) -> str:
    return sha256_json([context])


def load_point_context(result: PointResult) -> LoadPointContext:
    return LoadPointContext(
        label=result.label, point=result.point, slo=result.metrics.slo, started_at=result.started_at
    )


def capacity_step_context(
    knob: Knob,
    value: float,
    position: int,
    *,
    confirmation: bool,
    template: LoadPoint,
    slo: SLO,
    workload: WorkloadProfile | None = None,
    repeats: int | None = None,
    host_speed_ms: float | None = None,
    server_share: float | None = None,
) -> CapacityStepContext | WorkloadCapacityStepContext:
    """The load section's own search: a capacity step; a compared workload's (`workload` given): a workload
    capacity step, which also binds the profile. `repeats`: the runs its build asked for; `host_speed_ms`:
    the host's speed before the run, when timed, and `server_share` the server's share of the host's CPU over
    it."""
    step = {"knob": knob, "value": float(value), "position": position, "confirmation": confirmation}
    step["repeats"] = repeats
    step["host_speed_ms"], step["server_share"] = host_speed_ms, server_share
    if workload is None:
        return CapacityStepContext(**step, template=template, slo=slo)
    return WorkloadCapacityStepContext(**step, workload=workload, template=template, slo=slo)


def stated_host(load: object) -> dict[str, float | None]:
    """What a capacity step's context binds of its run's host load: the host-speed kernel's time and the
    server's share of the host's CPU, where the speed was timed (else neither)."""
    if not isinstance(load, HostLoad) or load.speed is None:
        return {"host_speed_ms": None, "server_share": None}
    return {"host_speed_ms": load.speed.reference_ms, "server_share": load.server}


def accuracy_context(result: AccuracyResult) -> AccuracyContext:
    return AccuracyContext(
        benchmark=result.benchmark,
        dataset=result.dataset,
        tests_run=list(result.tests_run),
        mode=result.mode,
        prompting=result.prompting,
        subset=result.subset,
        temperature=result.temperature,
        sampling=result.sampling,
        max_tokens=result.max_tokens,
        n_samples_per_task=result.pass_rates.n_samples_per_task,
    )


def server_scrapes_context(
    run: Context, interval_s: float, stop_when_saturated: bool
) -> ServerScrapesContext:
    return ServerScrapesContext(
        run=context_digest(run), interval_s=interval_s, stop_when_saturated=stop_when_saturated
    )


def energy_context(result: EnergyResult, covered: PointResult) -> EnergyContext:
    idle = result.idle
    return EnergyContext(
        window=(result.t_start, result.t_end),
        idle_window=None if isinstance(idle, NotMeasured) else (idle.t_start, idle.t_end),
        load_point=context_digest(load_point_context(covered)),
    )
