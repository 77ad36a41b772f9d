"""What a load point is: the workload shape, the arrival process and the SLO it is judged by."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema, model_validator

from probes.core.errors import InputError
from probes.core.measurement import Model, Quantity
from probes.core.untrusted.limits import MAX_REQUEST_S, MAX_REQUESTS, MAX_RUN_S, MAX_TOKENS


class LoadPointError(InputError):
    """A load point asked for in a way that cannot run (names the field)."""


# The latency metrics an SLO can be set on, named as everywhere else (load metrics, tuner, factsheet).
LatencyMetric = Literal["ttft_ms", "tpot_ms", "e2el_ms"]


class SLO(Model):
    """Per-request thresholds (vLLM `--goodput` semantics): a request is good only if it meets all."""

    ttft_ms: Quantity | None = Field(None, gt=0, description="time to first token threshold, ms")
    tpot_ms: Quantity | None = Field(None, gt=0, description="time per output token threshold, ms")
    e2el_ms: Quantity | None = Field(None, gt=0, description="end-to-end latency threshold, ms")
    p99_metric: LatencyMetric = Field(
        "e2el_ms", description="metric whose p99 is checked against its threshold (MLPerf-style validity)"
    )

    def thresholds(self) -> dict[str, float]:
        return {
            k: v
            for k, v in (("ttft_ms", self.ttft_ms), ("tpot_ms", self.tpot_ms), ("e2el_ms", self.e2el_ms))
            if v is not None
        }


def _constant_from_json(value: object) -> object:
    return math.inf if value is None else value


# The gamma shape of an open loop's gaps. Infinity (constant gaps) has no JSON number: it is written as null
# (pydantic's JSON for inf) and read back as inf, and the published schema says so, so a factsheet of a
# constant-rate point validates and reads back as it was measured.
Burstiness = Annotated[
    float,
    BeforeValidator(_constant_from_json),
    WithJsonSchema(
        {
            "anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "null"}],
            "description": "gamma shape of inter-arrival gaps: 1 Poisson, < 1 burstier; null: constant (∞)",
        }
    ),
]


class LoadPoint(Model):
    """One load level. Closed loop: `concurrency` users send back to back. Open loop: arrivals at
    `rate` req/s with gamma-distributed gaps (shape = burstiness; 1 = Poisson; inf = constant)."""

    mode: Literal["closed", "open"] = "closed"
    concurrency: int | None = Field(None, ge=1, description="closed loop: number of concurrent users")
    rate: float | None = Field(None, gt=0, description="open loop: target request rate, req/s")
    burstiness: Burstiness = Field(
        1.0, gt=0, description="gamma shape of inter-arrival gaps; inf = constant (null in JSON)"
    )
    max_concurrency: int | None = Field(None, ge=1, description="open loop: cap on requests in flight")
    num_requests: int = Field(64, ge=1, le=MAX_REQUESTS, description="requests to send (upper bound)")
    duration_s: float | None = Field(
        None, gt=0, le=MAX_RUN_S, description="stop sending new requests after this many s"
    )
    warmup_requests: int = Field(0, ge=0, description="first requests excluded from the steady window")
    cooldown_requests: int = Field(0, ge=0, description="last requests excluded from the steady window")
    input_len: int = Field(128, ge=1, le=MAX_TOKENS, description="prompt length, tokens")
    output_len: int = Field(64, ge=1, le=MAX_TOKENS, description="max_tokens asked for")
    endpoint: Literal["completions", "chat"] = "completions"
    ignore_eos: bool = Field(True, description="ask the server to generate exactly output_len tokens")
    seed: int = 0
    request_timeout_s: float = Field(
        300.0,
        gt=0,
        le=MAX_REQUEST_S,
        description="longest wait to connect, and longest silence on an open request",
    )
    max_connect_failures: int = Field(
        5, ge=1, description="stop sending after this many consecutive connection failures (target down)"
    )

    @model_validator(mode="after")
    def _check_mode(self) -> LoadPoint:
        if self.mode == "closed" and self.concurrency is None:
            raise ValueError("closed-loop point needs 'concurrency'")
        if self.mode == "open" and self.rate is None:
            raise ValueError("open-loop point needs 'rate'")
        if self.warmup_requests + self.cooldown_requests >= self.num_requests:
            raise ValueError("warmup_requests + cooldown_requests must leave requests to measure")
        return self

    @classmethod
    def at(cls, *, concurrency: int | None = None, rate: float | None = None, **shape) -> LoadPoint:
        """The one way a load point is assembled (build spec, `probe load`, tuner): closed loop with
        `concurrency` users, or open loop at `rate` req/s (`max_concurrency` caps requests in flight);
        `shape` holds the other fields. Exactly one of `concurrency` and `rate`."""
        if (concurrency is None) == (rate is None):
            raise LoadPointError(
                "a load point takes exactly one of concurrency (closed loop) or rate (open loop)"
            )
        mode = "closed" if concurrency is not None else "open"
        return cls(mode=mode, concurrency=concurrency, rate=rate, **shape)

    def check_schedule(self, span_s: float, what: str) -> None:
        """An open loop's schedule must end within MAX_RUN_S, or the point must stop itself with
        duration_s: a trace `0, 1e15` or a rate of 0.001/s without a duration would run for ever."""
        if self.duration_s is None and not span_s <= MAX_RUN_S:
            raise LoadPointError(
                f"{what} spans {span_s:,.0f} s, over the limit of {MAX_RUN_S:,.0f} s: set duration_s "
                "(--duration) or a higher rate"
            )

    @property
    def label(self) -> str:
        if self.mode == "closed":
            return f"concurrency={self.concurrency}"
        shape = "constant" if math.isinf(self.burstiness) else f"burstiness={self.burstiness:g}"
        cap = f", max_concurrency={self.max_concurrency}" if self.max_concurrency else ""
        return f"rate={self.rate:g}/s ({shape}{cap})"
