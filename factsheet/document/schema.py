"""The factsheet: a versioned pydantic model whose JSON Schema is published in `schemas/`.

Each section is either its measured result, carrying definitions, units, sample sizes and
methods, or `NotMeasured` with the reason. Raw records live in files beside the factsheet,
named here with their sha256.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from factsheet.document.compliance_summary import ComplianceSummary
from factsheet.document.conformance import ConformanceSection
from factsheet.document.governance import Governance
from factsheet.document.headline_model import Headline
from factsheet.document.plan import BuildPlan
from factsheet.document.predictor import PredictorSection
from factsheet.document.records_file import RecordsFile
from factsheet.document.repeats import Repeats
from factsheet.document.versions import same_major_pattern
from probes.accuracy import AccuracyResult
from probes.core.measurement import PERCENTILE_METHOD, Count, Model, NotMeasured
from probes.energy import CarbonResult, EnergyResult
from probes.hostload import HostLoad
from probes.load.capacity import CapacityResult
from probes.load.point import LoadPoint
from probes.load.runner import PointResult
from probes.load.workloads.profiles import WorkloadProfile
from probes.load.workloads.workload import SystemPrompt
from probes.targets import DeploymentFacts, EngineInfo, PreparedModel
from tuner import TuningResult

# semver: bump the minor when adding (with a default, so older documents stay valid), the major when changing.
# 1.1.0: energy.records (the counters' samples), load.capacity.result.search (its parameters), compliance (the
# gate's summary), arrivals.client_bound_rule, tuning.score.slo_metric's unified names (older ones still
# read), and the other additions of this release. 1.2.0: every raw-records file starts with a header binding it
# to the context it was measured in (factsheet/binding). See factsheet/document/versions.py.
# 1.3.0: sample_sufficiency.verdict (conclusive pass, conclusive fail or insufficient: probes.load.stats);
# load.rationale, the spec's statement of why the load is shaped as it is (the demo's request shape, SLO and
# confirmation size); each load point's workload states its profile, generator version, parameters and the
# digest of the request bodies as sent; chat-sessions points add figures by turn (load.points[].result.turns),
# their records carry session and turn; the predictor section is typed (factsheet/document/predictor.py:
# campaign, model selection per figure, learning curve, Pareto front, recommendation, verification, summary)
# and so is target.prepared_model.conversion.
# 1.3.0 also: per load point and capacity run, the target's /metrics over the run (`server_view`), the
# saturation test (`saturation`) and the scrape records (`server_records`); stop_reason "saturated".
# 1.4.0: load.compared_workloads: capacity at SLO for further workload profiles (e.g. chat-sessions beside
# synthetic), each search's records bound to its profile ("workload capacity step").
# 1.6.0: each load run's host load (`load.points[].host_load`, `load.capacity.host_load`, the compared
# workloads' too): CPU used by other processes and steal over the run, from /proc (probes/hostload), and
# whether the run was measured on a busy host.
# 1.6.0 also: `headline`: page 1's figures as data (value, interval, n, verdict, source run and rule), recomputed
# by validate from the rest of the sheet; a capacity whose bracket has no upper end is a lower bound.
# 1.6.0 also: a load point split across worker processes (load.workers > 1) states its client check
# (`load.points[].result.client`: each worker's event-loop lag, the client-bound verdict per worker and for
# the whole), and its records carry `worker` and `written_s`.
# 1.7.0: the deployment's own facts (`system.deployment`): the chat template as served (its digest, the text
# itself up to 16 KiB) and the generation config's sampling defaults (the file's digest, its values typed),
# or why not (an endpoint's files are not visible); each load point's workload names the system prompts it
# sent by digest (`load.points[].result.workload.system_prompts`, [] for none), each capacity search those of
# its runs (`load.capacity.system_prompts`, a compared workload's too).
# 1.7.0 also: repeats of the headline runs (`load.capacity.repeats`, a compared workload's too): k runs of the
# capacity's last confirmation, each after a fresh server start or a prefix-cache reset, each with its own seed;
# the headline states each figure's between-run spread and rebuild interval (`headline.figures[].rebuild`).
# Each run of a build has a seed of its own (`load.seed_rule`; a capacity run's in `seeds`), so no two runs
# send the same prompts.
# 1.8.0: repeats decide the capacity (probes.load.capacity.REPEATS_RULE, stated as `repeats.answer_rule`): the
# repeated confirmation's value holds only when every repeat passed; else the answer falls to the highest other
# passing value, unconfirmed, and the range counts the repeats. Validate applies the rule from 1.8.0 on.
# 1.8.0 also: every load record carries `written_s`, when its last byte was handed to the kernel (before, only a
# worker's did); an open-loop point's arrivals state the achieved rate by it and the write lag
# (`achieved_rate_written`, `achieved_fraction_written`, `write_lag_ms`; a worker's client check too), and the
# client-bound rule reads them beside sent_s's. The send lag is unchanged (from sent_s), its definition now
# naming the time it uses.
# 1.9.0: every load point states its client check (`load.points[].result.client`), one worker too: the
# single-process run samples its event-loop lag as each of many workers does and is judged by the same rule
# (`client.workers` may be 1), so a closed loop sent by one process has a validity verdict; an open loop's
# arrivals rule is unchanged and enters the check's verdict.
# 1.10.0: every reply judged, not only timed (issue 40): each load record states max_tokens, finish_reason and
# its outcome; the metrics count `truncated` apart and name where output tokens were counted from; a point
# states what was planned, sent and never sent; a void build says so on page 1 (headline `void`).
# 1.10.0 also: the build's plan (`plan`: each part's estimate from a calibration request, what a time budget
# cut, what it took), attested.
# 1.10.0 also: a capacity search states its rule (`result.search.rule`: capped, as before, or bracketing): bracketing
# doubles until a clear fail with `max_value` an optional cap (None: none), and confirms in steps of
# `search.confirm_runs` runs (the spec's repeats), a failed run stepping down (its runs stay among the points,
# each further one stating its `isolation`); `repeats.runs` are the step that held. validate replays the rule
# the document states (a document without one ran capped).
# 1.10.0 also: the author's governance statements (`governance`, from the spec's optional section, as written:
# release dates, base model and adapters, modalities, distribution channels, acceptable use, known limitations,
# standards claimed, a decision threshold per headline figure); declared, never measured.
# 1.11.0: the ids of the judging rules the document was judged by (`rules`: factsheet/document/rules), each
# looked up in the registry by validate; an older document is judged by the rule set of its version.
# 1.11.0 also: the plan's calibration request and round are each run several times, the median taken, and every
# run's E2EL stated (`plan.calibration.rounds_ms`, `plan.load_round.rounds_ms`; [] in a plan of one run), and
# the round's p99 E2EL (`plan.load_round.p99_ms`), which the plan's law judges its simulated search by.
# 1.12.0: the host's speed before each confirmation run and repeat (`host_load[].speed`, a reference kernel timed
# between runs, bound to the run's records), which `factsheet diff` notes beside them; a search's `confirm_step` may be
# bisect-long, and its answer rests on long runs once any is made (probes.load.capacity.answer).
SCHEMA_VERSION = "1.12.0"


class ModelIdentity(Model):
    """Who and what is being described (copied into the factsheet's identity section)."""

    name: str = Field(description="model name, e.g. SmolLM2-135M-Instruct")
    version: str | None = Field(None, description="model version or revision")
    owner: str | None = Field(None, description="organisation that publishes the model")
    license: str | None = Field(None, description="SPDX identifier or licence name")
    source: str | None = Field(
        None, description="where the weights come from (URL or package), descriptive only"
    )
    architecture: str | None = None
    parameters: Count | None = Field(None, ge=1, description="parameter count, if known")
    intended_use: str | None = None
    out_of_scope: str | None = None


class Identity(ModelIdentity):
    served_model: PreparedModel | None = Field(None, description="weights actually served, with digests")


class Host(Model):
    hostname_hash: str = Field(description="sha256 of the host name (not the name itself)")
    os: str
    kernel: str
    cpu_model: str | None
    cpu_count: int
    cpu_affinity: int = Field(description="CPUs this process may run on")
    memory_gib: float | None
    gpus: list[str] | NotMeasured


class SystemSection(Model):
    """The system measured: target kind, engine, host and software versions, as found at build time."""

    target_kind: Literal["vllm", "endpoint"]
    base_url: str | None = Field(None, description="endpoint targets only (API keys are never written)")
    engine: EngineInfo | NotMeasured
    host: Host = Field(description="the host running the tool (and the server, for vllm targets)")
    python: str
    libraries: dict[str, str] = Field(description="tool-side library versions")
    serving_libraries: dict[str, str] | NotMeasured = Field(
        description="serving-environment library versions"
    )
    deployment: DeploymentFacts | None = Field(
        None,
        description="the chat template and the generation config's sampling defaults as served, each or why "
        "not (schema >= 1.7.0; None: an older document, which does not state them)",
    )


class LoadPointEntry(Model):
    result: PointResult
    records: RecordsFile
    server_records: RecordsFile | None = Field(
        None, description="the /metrics scrapes of the run (schema >= 1.3.0; None: no page was scraped)"
    )
    host_load: HostLoad | NotMeasured | None = Field(
        None, description="what else used the host over the run, and whether it was busy (schema >= 1.6.0)"
    )


def headline_index(points: list[LoadPointEntry]) -> int | None:
    """The headline load point: the most completed requests in a steady window (the first of equals). The
    energy section measures its window; At a glance and the release gate's `[headline]` quote it."""
    windowed = [i for i, p in enumerate(points) if p.result.window_epoch] or list(range(len(points)))
    return max(windowed, key=lambda i: points[i].result.metrics.completed, default=None)


def energy_point(points: list[LoadPointEntry]) -> LoadPointEntry | None:
    """Energy and performance from the same run: the steady window of the headline load point."""
    i = headline_index(points)
    return points[i] if i is not None and points[i].result.window_epoch else None


class CapacitySection(Model):
    result: CapacityResult
    records: list[RecordsFile] = Field(description="raw records of each probed point, in probing order")
    server_records: list[RecordsFile | None] = Field(
        default_factory=list,
        description="each probed point's /metrics scrapes, in probing order (schema >= 1.3.0; None: none)",
    )
    host_load: list[HostLoad | NotMeasured | None] = Field(
        default_factory=list,
        description="what else used the host over each probed point's run, in probing order (schema >= 1.6.0)",
    )
    seeds: list[int] = Field(
        default_factory=list,
        description="the seed each probed point's prompts were drawn with, in probing order (schema >= 1.7.0, "
        "load.seed_rule; empty: every run took the template's seed)",
    )
    repeats: Repeats | None = Field(
        None,
        description="the headline run repeated (schema >= 1.7.0; None: the spec asked no repeats)",
    )
    system_prompts: list[SystemPrompt] | None = Field(
        None,
        description="each distinct system prompt its runs sent (probes, confirmations, then repeats), in the "
        "order first sent, with the sessions of all runs that sent it; []: none (schema >= 1.7.0; None: not "
        "recorded)",
    )

    @model_validator(mode="after")
    def _one_records_file_a_point(self) -> CapacitySection:
        """Every probed point names its records, in order: a section with fewer (or more) files than points
        is malformed, refused here naming the field before anything pairs them (a crash before, exit 3)."""
        points = len(self.result.points)
        if len(self.records) != points:
            raise ValueError(
                f"records: {len(self.records)} files for {points} probed points (one a point, in probing order)"
            )
        if len(self.server_records) > points:
            raise ValueError(f"server_records: {len(self.server_records)} entries for {points} probed points")
        if len(self.host_load) > points:
            raise ValueError(f"host_load: {len(self.host_load)} entries for {points} probed points")
        if self.seeds and len(self.seeds) != points:
            raise ValueError(f"seeds: {len(self.seeds)} seeds for {points} probed points (one a point)")
        if self.repeats is not None and self.repeats.of is not None and not 0 <= self.repeats.of < points:
            raise ValueError(f"repeats.of: {self.repeats.of} names no probed point (there are {points})")
        return self

    def answer_point(self):
        """The last passing run at the answer (its confirmation where there is one); None without one."""
        r = self.result
        return next((p for p in reversed(r.points) if p.value == r.capacity and p.passed), None)

    def named_records(self, path: str) -> list[tuple[str, RecordsFile]]:
        """Its records files, each with the path of the field naming it (`path`: this section's)."""
        out = [(f"{path}.records[{i}]", r) for i, r in enumerate(self.records)]
        scrapes = enumerate(self.server_records)
        out += [(f"{path}.server_records[{i}]", r) for i, r in scrapes if r is not None]
        for j, run in enumerate(self.repeats.runs if self.repeats is not None else []):
            out.append((f"{path}.repeats.runs[{j}].records", run.records))
            if run.server_records is not None:
                out.append((f"{path}.repeats.runs[{j}].server_records", run.server_records))
        return out

    def labelled_records(self, what: str = "capacity") -> list[tuple[str, RecordsFile]]:
        """Its records files, each with what it holds in words (`what`: whose search)."""
        knob, points = self.result.knob, self.result.points
        runs = [
            (f"{what}{' confirmation' if pt.confirmation else ''}: {knob} {pt.value:g}", rec)
            for pt, rec in zip(points, self.records, strict=True)
        ]
        scrapes = [
            (f"server view: {what} {knob} {pt.value:g}", rec)
            for pt, rec in zip(points, self.server_records, strict=False)
            if rec is not None
        ]
        repeats = self.repeats.runs if self.repeats is not None else []
        again = [
            (f"{what} repeat {j + 2}: {knob} {r.point.value:g}", r.records) for j, r in enumerate(repeats)
        ]
        again += [
            (f"server view: {what} repeat {j + 2}: {knob} {r.point.value:g}", r.server_records)
            for j, r in enumerate(repeats)
            if r.server_records is not None
        ]
        return runs + scrapes + again


class ComparedWorkload(Model):
    """Capacity at SLO for another workload profile, beside the load section's own (schema >= 1.4.0): same
    target, SLO, seed and knob; its own profile, endpoint and search."""

    workload: WorkloadProfile = Field(
        description="the profile and its parameters as the build spec gave them"
    )
    template: LoadPoint = Field(
        description="the settings every probe of its search takes (lengths, endpoint)"
    )
    capacity: CapacitySection


class LoadSection(Model):
    percentile_method: str = PERCENTILE_METHOD
    points: list[LoadPointEntry]
    capacity: CapacitySection | NotMeasured
    rationale: str | None = Field(
        None,
        description="why the load is shaped as it is (request shape, SLO, confirmation size), as the build "
        "spec's load.rationale states it; None: the spec gives no reason (schema >= 1.3.0)",
    )
    compared_workloads: list[ComparedWorkload] = Field(
        default_factory=list,
        description="capacity at SLO for further workload profiles, side by side with `capacity` (>= 1.4.0)",
    )
    seed_rule: str | None = Field(
        None,
        description="how each run's seed was chosen, so that no two runs of the build send the same prompts "
        "(schema >= 1.7.0; None: every run took load.seed, so runs of one build sent the same prompts)",
    )

    def profile(self) -> str:
        """The workload profile of the points and of `capacity`, as the points state it (synthetic before
        schema 1.3.0)."""
        workload = self.points[0].result.workload if self.points else None
        return (workload.profile if workload is not None else None) or "synthetic"


class EnergySection(Model):
    energy: EnergyResult | NotMeasured
    carbon: CarbonResult | NotMeasured
    records: RecordsFile | None = Field(
        None, description="every energy counter's samples, one channel a line (schema >= 1.1.0)"
    )


class AccuracySection(Model):
    result: AccuracyResult
    records: RecordsFile


class Provenance(Model):
    tool: str = "llm-factsheet"
    tool_version: str
    git_commit: str | None
    git_dirty: bool | None
    spec_file: str = Field(
        description="the spec's file name (its content is spec_sha256), never the folder it lay in"
    )
    spec_sha256: str
    command: list[str] = Field(
        description="the command line, its program by name and each absolute path "
        "argument relative to the spec's folder, the tool's cache (<cache>/...) or by name"
    )
    started_at: str = Field(description="ISO 8601, UTC")
    finished_at: str = Field(description="ISO 8601, UTC")
    wall_time_s: float


class Factsheet(Model):
    schema_version: str = Field(
        SCHEMA_VERSION,
        pattern=same_major_pattern(SCHEMA_VERSION),
        description="semver of the schema the document follows; a tool reads every older minor of its major",
    )
    kind: Literal["llm-factsheet"] = "llm-factsheet"
    rules: list[str] | None = Field(
        None,
        description="the ids of the judging rules the document was judged by, from the registry of the tool "
        "that wrote it (schema >= 1.11.0; None: an older document, judged by the rules of its version)",
    )
    name: str
    headline: Headline | None = Field(
        None,
        description="page 1's figures as data, recomputed by `factsheet validate` from the rest of the sheet "
        "(schema >= 1.6.0; None: an older document, whose headline readers compute from it)",
    )
    identity: Identity
    governance: Governance | None = Field(
        None,
        description="the author's governance statements as the spec declares them (schema >= 1.10.0; None: "
        "none declared, or an older document)",
    )
    system: SystemSection
    conformance: ConformanceSection | None = Field(
        None,
        description="the serving engine found (name, version, the model id sent) and how the server answered "
        "the preflight before the first measured request, check by check (schema >= 1.10.0; None: an older "
        "document, which does not state it)",
    )
    plan: BuildPlan | NotMeasured | None = Field(
        None,
        description="what the build planned before its first measured request, each part's estimate from a "
        "calibration request, what its time budget cut, and what the planned part took (schema >= 1.10.0, "
        "attested: an estimate; NotMeasured: why no estimate; None: an older document)",
    )
    load: LoadSection | NotMeasured
    accuracy: AccuracySection | NotMeasured
    energy: EnergySection | NotMeasured
    tuning: TuningResult | NotMeasured
    predictor: PredictorSection | NotMeasured
    compliance: ComplianceSummary | NotMeasured = Field(
        default_factory=lambda: NotMeasured(reason="no compliance policy in the build spec"),
        description="the gate run at the end of the build (full report: compliance.json)",
    )
    provenance: Provenance

    def records_files(self) -> list[tuple[str, RecordsFile]]:
        """Every raw-records file the factsheet names, with what it holds."""
        return [file for _, files in self.records_groups() for file in files]

    def records_groups(self) -> list[tuple[str, list[tuple[str, RecordsFile]]]]:
        """The same files by whose they are (the load points', each capacity search's, the accuracy run's, the
        energy samples', the predictor's), in order; each group's files as `records_files` names them."""
        out: list[tuple[str, list[tuple[str, RecordsFile]]]] = []
        if not isinstance(self.load, NotMeasured):
            points = [(f"load: {p.result.label}", p.records) for p in self.load.points]
            points += [
                (f"server view: {p.result.label}", p.server_records)
                for p in self.load.points
                if p.server_records
            ]
            out.append(("load points", points))
            if not isinstance(self.load.capacity, NotMeasured):
                out.append((f"capacity search: {self.load.profile()}", self.load.capacity.labelled_records()))
            for c in self.load.compared_workloads:
                files = c.capacity.labelled_records(f"capacity {c.workload.profile}")
                out.append((f"capacity search: {c.workload.profile}", files))
        if not isinstance(self.accuracy, NotMeasured):
            out.append(("accuracy", [("accuracy: per-sample verdicts", self.accuracy.records)]))
        if not isinstance(self.energy, NotMeasured) and self.energy.records is not None:
            out.append(("energy", [("energy: counter samples", self.energy.records)]))
        if not isinstance(self.predictor, NotMeasured) and self.predictor.records is not None:
            out.append(("predictor", [("predictor: campaign measurements", self.predictor.records)]))
        return [(name, files) for name, files in out if files]
