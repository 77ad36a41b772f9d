"""The spec's `tuning:` section: what to optimise, over which knobs, within which budget."""

from __future__ import annotations

import itertools
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from probes.core.errors import InputError
from probes.core.measurement import Count, Model, Quantity
from probes.load.point import LatencyMetric
from tuner.knobs import KNOBS, OperatingPoint


class TunerSpecError(InputError):
    """A `tuning:` setting that cannot be honoured; the message names the field."""


def _unified_metric_name(value):
    # Specs and factsheets before schema 1.1 said e2el/ttft/tpot: the same metrics, in ms.
    return f"{value}_ms" if value in ("e2el", "ttft", "tpot") else value


# "e2el_ms" etc., as the load probe's SLO names them; the older names are still read (and rewritten).
SloMetric = Annotated[LatencyMetric | Literal["e2el", "ttft", "tpot"], BeforeValidator(_unified_metric_name)]


class HwCost(Model):
    """Hardware cost, expressed in the score's unit (req/s) so that it can be subtracted from goodput."""

    per_batch_slot_rps: Quantity = Field(
        0.0, ge=0, description="score charged per unit of max_num_seqs (req/s per sequence slot)"
    )
    per_spec_token_rps: Quantity = Field(
        0.0, ge=0, description="score charged per speculative token of width k (req/s per token)"
    )

    def of(self, point: OperatingPoint) -> float:
        return self.per_batch_slot_rps * point.max_num_seqs + self.per_spec_token_rps * point.spec_k

    def describe(self) -> str:
        return (
            f"hw_cost(K) = {self.per_batch_slot_rps:g} req/s × max_num_seqs"
            f" + {self.per_spec_token_rps:g} req/s × spec_k"
        )


class KnobSpace(Model):
    """Values each logical knob may take, ascending; a knob with one value is held fixed."""

    concurrency: list[Count] = Field(default_factory=lambda: [1, 2, 4, 8, 16, 32, 64])
    max_num_seqs: list[Count] = Field(default_factory=lambda: [1, 2, 4, 8, 16, 32, 64, 128, 256])
    spec_k: list[Count] = Field(default_factory=lambda: [0, 1, 2, 3, 4, 5])

    @field_validator("concurrency", "max_num_seqs", "spec_k")
    @classmethod
    def _ascending_unique(cls, values: list[int], info) -> list[int]:
        if not values:
            raise TunerSpecError(f"tuning.knobs.{info.field_name}: needs at least one value")
        if sorted(set(values)) != values:
            raise TunerSpecError(
                f"tuning.knobs.{info.field_name}: values must be unique and ascending, got {values}"
            )
        low = 0 if info.field_name == "spec_k" else 1
        if values[0] < low:
            raise TunerSpecError(f"tuning.knobs.{info.field_name}: values must be >= {low}")
        return values

    def values(self, knob: str) -> list[int]:
        return getattr(self, knob)

    def points(self, held: dict[str, int] | None = None) -> list[OperatingPoint]:
        """Every combination of knob values; knobs in `held` only at their held value."""
        held = held or {}
        lists = [[held[k]] if k in held else self.values(k) for k in KNOBS]
        return [OperatingPoint(**dict(zip(KNOBS, combo, strict=True))) for combo in itertools.product(*lists)]

    def size(self) -> int:
        n = 1
        for knob in KNOBS:
            n *= len(self.values(knob))
        return n


class TuningLoad(Model):
    """The load each tuning evaluation offers: a load point less the knobs, which the tuner sets (the
    prompts themselves are the load probe's synthetic workload). The spec calls it `tuning.workload`."""

    mode: Literal["closed", "open"] = Field(
        "closed",
        description="closed: `concurrency` clients send back to back; open: arrivals at `rate_rps`, "
        "at most `concurrency` in flight",
    )
    rate_rps: Quantity | None = Field(None, gt=0, description="open-loop arrival rate (req/s)")
    burstiness: Quantity = Field(1.0, gt=0, description="gamma shape of inter-arrival times; 1 = Poisson")
    input_len: Count = Field(128, ge=1, description="prompt tokens per request")
    output_len: Count = Field(64, ge=1, description="generated tokens per request (EOS ignored)")
    num_requests: Count = Field(64, ge=1, description="requests per evaluation run")

    @model_validator(mode="after")
    def _rate_for_open(self) -> TuningLoad:
        if self.mode == "open" and self.rate_rps is None:
            raise TunerSpecError("tuning.workload.rate_rps: required when mode is 'open'")
        return self


class TunerSpec(Model):
    """Settings of the SLO-Tuner (the spec's `tuning:` section)."""

    slo_metric: SloMetric = Field(
        "e2el_ms", description="latency the SLO is set on: e2el_ms, ttft_ms or tpot_ms (ms, vLLM definitions)"
    )
    slo_p99_ms: Quantity = Field(gt=0, description="SLO: p99 of `slo_metric` must stay at or below this (ms)")
    penalty_lambda: Quantity = Field(
        10.0,
        ge=0,
        description="λ: score lost per second of p99 above the SLO, in (req/s)/s",
    )
    hw_cost: HwCost = Field(default_factory=HwCost)
    knobs: KnobSpace = Field(default_factory=KnobSpace)
    start: OperatingPoint = Field(
        default_factory=lambda: OperatingPoint(concurrency=16, max_num_seqs=128, spec_k=0),
        description="default operating point the climb starts from and is compared against "
        "(vLLM's CPU API-server default max_num_seqs is 128; speculation off)",
    )
    workload: TuningLoad = Field(default_factory=TuningLoad)
    max_evaluations: Count = Field(30, ge=1, description="budget: measured evaluations (each may repeat)")
    time_budget_s: Quantity = Field(1800.0, gt=0, description="budget: wall time incl. restarts (s)")
    repeats: Count = Field(1, ge=1, description="runs per evaluation; figures pool their requests")
    min_samples: Count = Field(
        32, ge=1, description="least completed requests an evaluation needs to be scored"
    )
    noise_z: Quantity = Field(
        2.0, gt=0, description="a move is accepted only if its score gain exceeds z × SE of the gain"
    )
    min_gain_rps: Quantity = Field(0.0, ge=0, description="a move must also gain at least this (req/s)")
    screen_top: Count = Field(
        2, ge=1, description="with a simulator: neighbours measured per round, best predicted first"
    )
    restarts: Count = Field(
        2,
        ge=0,
        description="new climbs after a local optimum while budget remains: each starts at the unevaluated "
        "point with the best predicted score (with a simulator) or the one farthest from every evaluated "
        "point (without); 0 = a single climb from the default",
    )
    confirm_runs: Count = Field(
        3,
        ge=0,
        description="before recommending, fresh evaluations of the search's best point, the default and the "
        "contenders within noise of the best, in interleaved rounds (charged to the budget); the "
        "recommendation is chosen from these alone; 0 = recommend the search's best as measured",
    )
    confirm_contenders: Count = Field(
        2, ge=0, description="measured points within noise of the best confirmed besides it and the default"
    )
    slo_probability: Quantity = Field(
        0.9,
        gt=0,
        le=1,
        description="a recommended point must meet the p99 SLO in a fresh run with at least this probability "
        "(a lower confidence bound from its confirmation runs, see slo_confidence); if none does, the most "
        "likely one is chosen",
    )
    slo_confidence: Quantity = Field(
        0.9,
        gt=0,
        lt=1,
        description="confidence of the lower bound of P(SLO) that must reach `slo_probability`: a point is "
        "recommended only if its confirmation runs show, at this confidence, that it meets the SLO in at "
        "least that share of fresh runs (choosing among several confirmed points favours a lucky one; a "
        "bound, unlike the estimate, rarely lets a point on the SLO's edge pass)",
    )
    bootstrap_resamples: Count = Field(200, ge=20, description="resamples for SE and 95 % CI")
    seed: Count = 0

    @model_validator(mode="after")
    def _consistent(self) -> TunerSpec:
        for knob in KNOBS:
            value = getattr(self.start, knob)
            if value not in self.knobs.values(knob):
                raise TunerSpecError(
                    f"tuning.start.{knob}: {value} is not among tuning.knobs.{knob} {self.knobs.values(knob)}"
                )
        if self.workload.num_requests * self.repeats < self.min_samples:
            raise TunerSpecError(
                f"tuning.min_samples: {self.min_samples} exceeds workload.num_requests × repeats "
                f"({self.workload.num_requests} × {self.repeats})"
            )
        return self
