"""The build spec (`model.yaml`): the users' interface. Every field documented; unknown fields rejected."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from factsheet.document.repeats import SEED_BLOCK, run_seed
from factsheet.document.schema import ModelIdentity
from factsheet.spec.compliance import ComplianceSpec
from factsheet.spec.governance import GovernanceSpec
from factsheet.spec.predictor import PredictorSpec
from factsheet.spec.publish import PublishSpec
from factsheet.spec.sign import SignSpec
from probes.accuracy import HumanEvalSpec
from probes.core.documents import parse_yaml_model
from probes.core.errors import InputError
from probes.core.measurement import Count, Model, Quantity
from probes.core.untrusted.limits import MAX_REQUEST_S, MAX_REQUESTS, MAX_RUN_S, MAX_TOKENS
from probes.energy import EnergySpec
from probes.load import capacity
from probes.load.point import SLO, LoadPoint
from probes.load.workloads.profiles import (
    ChatSessionsProfile,
    TraceProfile,
    WorkloadProfile,
    nominal_lengths,
)
from probes.load.workloads.trace import trace_shape
from probes.server_view import ServerViewSpec
from probes.targets import TargetSpec
from tuner import TunerSpec

SPEC_VERSION = 1
MAX_REPEATS = 50
# The one reason a factsheet gives for a section the spec left out (`NotMeasured.reason`).
NOT_REQUESTED = "not requested in the build spec"


class PointSpec(Model):
    """One load level: `concurrency` (closed loop) or `rate` (open loop, req/s); a trace point gives
    neither (the trace's timestamps are its schedule)."""

    concurrency: Count | None = Field(None, ge=1)
    rate: Quantity | None = Field(None, gt=0)
    burstiness: Quantity = Field(
        1.0, gt=0, description="gamma shape of gaps: 1 Poisson, <1 burstier, .inf constant"
    )
    max_concurrency: Count | None = Field(None, ge=1)
    num_requests: Count = Field(64, ge=1, le=MAX_REQUESTS)
    duration_s: Quantity | None = Field(None, gt=0, le=MAX_RUN_S)

    @model_validator(mode="after")
    def _one_load(self) -> PointSpec:
        if self.concurrency is not None and self.rate is not None:
            raise ValueError("a point takes exactly one of concurrency (closed loop) or rate (open loop)")
        return self


class CapacitySpec(Model):
    """Capacity at SLO: the largest rate or concurrency whose p99 meets the SLO (doubling, then bisection)."""

    knob: Literal["rate", "concurrency"] = Field(
        "concurrency", description="open-loop rate or closed-loop users"
    )
    start: Quantity = Field(capacity.DEFAULT_START, gt=0, description="first value probed")
    max_value: Quantity | None = Field(
        None,
        gt=0,
        description="an optional cap: the largest value probed (the factsheet names it when it binds). None: "
        "the search doubles until a clear fail (before, 64 when not given)",
    )
    min_attainment: Quantity | None = Field(None, gt=0, le=1, description="also require this SLO attainment")
    tolerance: Quantity = Field(
        capacity.DEFAULT_TOLERANCE, gt=0, description="rate: stop when the bracket is this narrow (relative)"
    )
    max_points: Count = Field(capacity.DEFAULT_MAX_POINTS, ge=2, description="probed points at most")
    num_requests: Count = Field(32, ge=2, le=MAX_REQUESTS, description="requests per probed point")
    confirm_requests: Count | None = Field(
        None,
        ge=2,
        le=MAX_REQUESTS,
        description="requests of a confirmation run of the answer, long enough for its p99 claim "
        "(≥ 459 measured for a p99 at 99 % confidence); none: the answer rests on its short probe",
    )
    max_confirmations: Count = Field(
        capacity.DEFAULT_MAX_CONFIRMATIONS,
        ge=1,
        description="confirmation runs at most (stepping down on a failure)",
    )
    confirm_step: capacity.ConfirmStep = Field(
        "one",
        description="how a failed confirmation steps down: one (concurrency − 1, or the next lower passing "
        "probe of a rate) or bisect (to the middle between the failed value and the highest value passing "
        "below it: a long run can hold far less than its short probe showed) or bisect-long (to the middle "
        "between the failed value and the highest value a long run passed below it, else the lowest value a "
        "probe passed: a failed long run discredits the probes' passes just below it)",
    )
    repeats: Count = Field(
        1,
        description="runs of the headline run (the last confirmation) in all: 1, as older specs had it, or k ≥ 3, "
        f"each further one after a fresh server start (a server the tool starts) or a prefix-cache reset (an "
        f"endpoint that offers one), each with its own seed; the factsheet states each headline figure's "
        f"spread over them and its rebuild interval. At most {MAX_REPEATS}; needs confirm_requests",
    )

    @field_validator("repeats", mode="before")
    @classmethod
    def _repeats(cls, k: object) -> object:
        if isinstance(k, int) and not isinstance(k, bool) and (k < 1 or k == 2 or k > MAX_REPEATS):
            raise ValueError(
                f"{k} runs: 1 (no repeats) or 3 to {MAX_REPEATS} (two runs leave one degree of freedom, "
                "and a rebuild interval t(1, 0.975) = 12.7 standard deviations wide)"
            )
        return k

    @model_validator(mode="after")
    def _repeat_what_is_confirmed(self) -> CapacitySpec:
        if self.repeats > 1 and self.confirm_requests is None:
            raise ValueError(
                "repeats: needs confirm_requests (what is repeated is the long confirmation run)"
            )
        runs = self.max_points + self.max_confirmations * self.repeats
        if runs >= SEED_BLOCK:
            raise ValueError(
                f"max_points + max_confirmations × repeats = {runs} runs: at most {SEED_BLOCK - 1} (each "
                "run of a search draws its own seed from a block of that many)"
            )
        if self.max_value is not None and self.start > self.max_value:
            raise ValueError(f"start {self.start:g} > max_value {self.max_value:g}")
        return self

    def requests_at(self, requests: int, value: float, profile: WorkloadProfile | None) -> int:
        """A run's requests at `value`: at least two per closed-loop user (chat sessions: a whole session,
        turns_max), so a search that reaches far above its start still keeps every user busy (a rate's run
        keeps its count)."""
        per_user = profile.turns_max if isinstance(profile, ChatSessionsProfile) else 2
        return max(requests, per_user * int(value)) if self.knob == "concurrency" else requests

    def search_parameters(self) -> capacity.CapacitySearch:
        """The search's parameters this spec asks for, as the result states them (its floor the default)."""
        return capacity.CapacitySearch.for_knob(
            self.knob,
            start=self.start,
            max_value=self.max_value,
            tolerance=self.tolerance,
            max_points=self.max_points,
            max_confirmations=self.max_confirmations,
            confirm_step=self.confirm_step,
            rule="bracketing",
            confirm_runs=self.repeats,
        )


def _enough_sessions(profile: ChatSessionsProfile, turns: int, users: int, where: str) -> None:
    """Closed-loop chat sessions: every user needs a session of its own, or the point runs below the
    concurrency it states. `turns` requests make at least turns / turns_max sessions."""
    need = users * profile.turns_max
    if turns < need:
        raise ValueError(
            f"{where}: {turns} requests (turns) may make fewer chat sessions than its {users:g} users: "
            f"needs at least concurrency × turns_max = {need}"
        )


def _capacity_sessions(profile: ChatSessionsProfile, capacity: CapacitySpec, where: str) -> None:
    # Without a cap, a run above the start gets turns_max turns per user (CapacitySpec.requests_at).
    users = int(capacity.max_value if capacity.max_value is not None else capacity.start)
    _enough_sessions(profile, capacity.num_requests, users, f"{where}.num_requests")
    if capacity.confirm_requests is not None:
        _enough_sessions(profile, capacity.confirm_requests, users, f"{where}.confirm_requests")


class ComparedWorkloadSpec(Model):
    """Capacity at SLO for another workload profile, measured on the same target under the same SLO, seed,
    warm-up and first point's load knob as the load section's own capacity, so the two answers compare."""

    workload: WorkloadProfile = Field(description="the profile and its parameters (not trace: no knob)")
    endpoint: Literal["completions", "chat"] = Field(
        "completions", description="the endpoint it is sent to (chat-sessions: chat)"
    )
    capacity: CapacitySpec = Field(description="its capacity search, sized to its own time budget")

    @model_validator(mode="after")
    def _fits(self) -> ComparedWorkloadSpec:
        if isinstance(self.workload, TraceProfile):
            raise ValueError("workload trace: no capacity (its schedule is fixed: there is no knob)")
        if self.workload.profile == "chat-sessions" and self.endpoint != "chat":
            raise ValueError("workload chat-sessions: needs endpoint 'chat'")
        if isinstance(self.workload, ChatSessionsProfile) and self.capacity.knob == "concurrency":
            _capacity_sessions(self.workload, self.capacity, "capacity")
        return self


class LoadSpec(Model):
    """Streaming load test: the same workload shape at each point."""

    endpoint: Literal["completions", "chat"] = "completions"
    input_len: Count = Field(128, ge=1, le=MAX_TOKENS, description="prompt tokens")
    output_len: Count = Field(
        64, ge=1, le=MAX_TOKENS, description="output tokens asked for (ignore_eos where supported)"
    )
    warmup_requests: Count = Field(0, ge=0, description="per point, excluded from the steady window")
    cooldown_requests: Count = Field(0, ge=0)
    seed: Count = 0
    request_timeout_s: Quantity = Field(300.0, gt=0, le=MAX_REQUEST_S)
    slo: SLO = Field(default_factory=SLO, description="goodput thresholds in ms (vLLM --goodput semantics)")
    budget_s: Quantity | None = Field(
        None,
        gt=0,
        description="the build's time budget in seconds (`factsheet build --budget` wins): the "
        "build plans to it before the first measured request and cuts capacity probes to keep it "
        "(factsheet/document/plan.py BUDGET_RULE); none: planned and stated, nothing cut",
    )
    points: list[PointSpec] = Field(min_length=1)
    capacity: CapacitySpec | None = Field(None, description="search capacity at SLO after the points")
    rationale: str | None = Field(
        None,
        max_length=2000,
        description="why the load is shaped this way (request shape, SLO, confirmation size, time budget): "
        "copied into the factsheet's load section and rendered with the load figures",
    )
    workload: WorkloadProfile | None = Field(
        None,
        description="workload profile and its parameters (README 'Workload profiles'); none: synthetic. "
        "A relative `path` is relative to the spec's folder",
    )
    server_view: ServerViewSpec = Field(
        default_factory=ServerViewSpec, description="scraping the target's /metrics (probes/server_view)"
    )
    compared_workloads: list[ComparedWorkloadSpec] = Field(
        default_factory=list,
        description="capacity at SLO for further workload profiles, side by side with `capacity` (one per "
        "profile, each different from `workload`'s)",
    )
    workers: Annotated[Count, Field(ge=1)] | Literal["auto"] = Field(
        1,
        description="worker processes the load is sent from, one event loop each ('auto': one per core of "
        "the host that builds; more than its cores is refused before anything is sent). 1: one process, as "
        "older specs had it",
    )
    executor: Literal["processes", "ray"] = Field(
        "processes",
        description="where the workers run: processes on this host, or Ray actors spread across a cluster's "
        "nodes (each node's clock offset measured and stated); `auto` workers is for processes only",
    )
    ray_address: str | None = Field(
        None, description="executor ray: the cluster's address (host:port); none: a local Ray instance"
    )

    @model_validator(mode="after")
    def _capacity_needs_p99_threshold(self) -> LoadSpec:
        if self.capacity is not None and self.slo.thresholds().get(self.slo.p99_metric) is None:
            raise ValueError(f"capacity needs a threshold on slo.{self.slo.p99_metric} (the p99 metric)")
        return self

    @model_validator(mode="after")
    def _points_fit_the_workload(self) -> LoadSpec:
        trace = isinstance(self.workload, TraceProfile)
        for i, p in enumerate(self.points):
            given = p.concurrency is not None or p.rate is not None
            if trace and given:
                raise ValueError(
                    f"points[{i}]: a trace point gives neither concurrency nor rate (the trace's "
                    "timestamps are its schedule; time_scale speeds it up or slows it down)"
                )
            if not trace and not given:
                raise ValueError(
                    f"points[{i}]: a point takes exactly one of concurrency (closed loop) or rate (open loop)"
                )
        if trace and self.capacity is not None:
            raise ValueError("capacity: not with workload trace (its schedule is fixed: there is no knob)")
        if self.workload is not None and self.workload.profile == "chat-sessions" and self.endpoint != "chat":
            raise ValueError("workload chat-sessions: needs endpoint 'chat'")
        if isinstance(self.workload, ChatSessionsProfile):
            for i, p in enumerate(self.points):
                if p.concurrency is not None:
                    _enough_sessions(self.workload, p.num_requests, p.concurrency, f"points[{i}]")
            if self.capacity is not None and self.capacity.knob == "concurrency":
                _capacity_sessions(self.workload, self.capacity, "capacity")
        return self

    @model_validator(mode="after")
    def _one_capacity_per_profile(self) -> LoadSpec:
        if self.compared_workloads and self.slo.thresholds().get(self.slo.p99_metric) is None:
            raise ValueError(
                f"compared_workloads: capacity needs a threshold on slo.{self.slo.p99_metric} (the p99 metric)"
            )
        if self.compared_workloads and isinstance(self.workload, TraceProfile):
            raise ValueError("compared_workloads: not with workload trace (its points have no knob to share)")
        seen = {self.profile_name}
        for i, c in enumerate(self.compared_workloads):
            if c.workload.profile in seen:
                raise ValueError(
                    f"compared_workloads[{i}]: profile {c.workload.profile} is already measured (one capacity "
                    "per profile: its records are named by it)"
                )
            seen.add(c.workload.profile)
        return self

    @property
    def profile_name(self) -> str:
        """The load section's own workload profile (synthetic where the spec names none)."""
        return self.workload.profile if self.workload is not None else "synthetic"

    def load_points(self, supports_ignore_eos: bool) -> list[LoadPoint]:
        """The sweep's points, each with its own seed (SEED_RULE: block 0, the point's place; the first
        point keeps load.seed, the template every capacity probe takes)."""
        points = [self._load_point(p, supports_ignore_eos) for p in self.points]
        return [p.model_copy(update={"seed": run_seed(self.seed, 0, i)}) for i, p in enumerate(points)]

    def compared_template(self, compared: ComparedWorkloadSpec, supports_ignore_eos: bool) -> LoadPoint:
        """The shape every probe of a compared workload's capacity search takes: the first point's, with that
        workload's lengths and endpoint (as the load section's own search takes the first point's)."""
        return self._load_point(self.points[0], supports_ignore_eos, compared.workload, compared.endpoint)

    def _load_point(
        self,
        p: PointSpec,
        supports_ignore_eos: bool,
        workload: WorkloadProfile | None = None,
        endpoint: str | None = None,
    ) -> LoadPoint:
        rate, count = p.rate, p.num_requests
        workload = workload or self.workload
        # The point states the lengths its profile sends (the spec's input/output_len where it sets none).
        input_len, output_len = nominal_lengths(workload)
        if isinstance(workload, TraceProfile):
            rate, count, input_len, output_len = trace_shape(workload, p.num_requests)
        return LoadPoint.at(
            concurrency=p.concurrency,
            rate=rate,
            burstiness=p.burstiness,
            max_concurrency=p.max_concurrency,
            num_requests=count,
            duration_s=p.duration_s,
            warmup_requests=self.warmup_requests,
            cooldown_requests=self.cooldown_requests,
            input_len=input_len or self.input_len,
            output_len=output_len or self.output_len,
            endpoint=endpoint or self.endpoint,
            ignore_eos=supports_ignore_eos,
            seed=self.seed,
            request_timeout_s=self.request_timeout_s,
        )


class BuildSpec(Model):
    """A factsheet build: what model, served how, measured with which workloads."""

    spec_version: Literal[1] = Field(SPEC_VERSION, description="version of this spec format")
    name: str = Field(description="factsheet name, used in file titles")
    model: ModelIdentity
    target: TargetSpec
    load: LoadSpec
    accuracy: HumanEvalSpec | None = Field(None, description="HumanEval+ pass@k; omitted = not measured")
    energy: EnergySpec | None = Field(None, description="energy and carbon; omitted = not measured")
    tuning: TunerSpec | None = Field(None, description="SLO-Tuner run; omitted = not run")
    predictor: PredictorSpec | None = Field(None, description="feature-model predictor; omitted = not run")
    compliance: ComplianceSpec | None = Field(
        None, description="policies gating the build; omitted = no gate"
    )
    governance: GovernanceSpec | None = Field(
        None, description="the author's governance statements, shown as declared"
    )
    output_dir: str | None = Field(None, description="default output folder (the CLI's -o wins)")
    sign: SignSpec | None = Field(None, description="sign the outputs (in-toto/DSSE); omitted = unsigned")
    publish: PublishSpec | None = Field(
        None, description="publish the factsheet to MLflow at the end of the build; omitted = not published"
    )


def load_spec(path: Path) -> tuple[BuildSpec, bytes]:
    """Parse and validate; returns the spec and its raw bytes (their digest goes into provenance)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read spec: {exc.strerror}") from exc
    shape = "a spec is a YAML mapping with name, model, target, load"
    spec = parse_yaml_model(raw, BuildSpec, str(path), shape)
    return _workload_beside(spec, path.parent), raw


def _workload_beside(spec: BuildSpec, folder: Path) -> BuildSpec:
    """A workload file (trace, code, jsonl) named relative to the spec is read from the spec's folder, as
    policy and key files are (the load section's workload and each compared one)."""

    def beside(workload):
        path = getattr(workload, "path", None)
        if workload is None or not path or Path(path).is_absolute():
            return workload
        return workload.model_copy(update={"path": str(folder / path)})

    compared = [c.model_copy(update={"workload": beside(c.workload)}) for c in spec.load.compared_workloads]
    load = spec.load.model_copy(
        update={"workload": beside(spec.load.workload), "compared_workloads": compared}
    )
    return spec.model_copy(update={"load": load})
