"""What a load run states about its own client: each worker's event-loop lag, and the client-bound verdict
applied per worker and to the whole, naming the worker that fell behind. One worker (the single-process
run) is sampled and judged by the same code as each of many."""

from __future__ import annotations

import array
import asyncio
import time
from typing import Literal

from pydantic import Field

from probes.core.measurement import Distribution, Model

# The loop's lag is read from a timer: every LAG_INTERVAL_S the worker asks to be woken and records how
# late it was. A response read waits for the loop just as that timer does, so the lag bounds how stale a
# chunk's timestamp (first chunk: TTFT; last: E2EL) can be; in a closed loop it is the only reading of
# the client's own delay (there is no schedule to lag behind).
LAG_INTERVAL_S = 0.01
LOOP_RULE = (
    "each worker (with load.workers 1, the run's one process) samples its event loop's lag (how late a "
    "10 ms timer fires) throughout the run; a worker is client-bound when that lag at p50 or p99 > 5 % of the smallest TTFT "
    "or E2EL figure at that percentile (the resolution latency figures are stated to), or, in an open loop, "
    "when its own share of the schedule breaks the arrivals rule (achieved rate and lag, by sent_s and by "
    "the last byte, written_s); the whole is "
    "client-bound when any worker is or when the whole run's arrivals are"
)
EventLoop = Literal["uvloop", "asyncio"]


async def sample_loop_lag(out: array.array) -> None:
    """Until cancelled: every LAG_INTERVAL_S, how late (ms) the timer fired, appended to `out` (an array
    of doubles, so a long run's samples cost 8 bytes each)."""
    while True:
        t = time.perf_counter()
        await asyncio.sleep(LAG_INTERVAL_S)
        out.append(1000 * (time.perf_counter() - t - LAG_INTERVAL_S))


def running_event_loop() -> EventLoop:
    """Which event loop this coroutine runs on: a caller of the single-process run may bring uvloop's."""
    return "uvloop" if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else "asyncio"


class WorkerCheck(Model):
    worker: int = Field(description="worker index, from 0")
    sent: int = Field(description="requests this worker sent")
    loop_lag_ms: Distribution
    send_lag_ms: Distribution | None = Field(None, description="open loop: this worker's send lag")
    achieved_fraction: float | None = Field(None, description="open loop: its achieved / scheduled rate")
    write_lag_ms: Distribution | None = Field(
        None, description="open loop: this worker's write lag, from written_s"
    )
    achieved_fraction_written: float | None = Field(
        None, description="open loop: its achieved / scheduled rate by the last byte"
    )
    client_bound: bool
    reasons: list[str] = Field(default_factory=list)


class ClockOffset(Model):
    """A Ray worker's node clock against the coordinator's, from round trips (the least-delayed one)."""

    worker: int
    node: str = Field(description="the Ray node id the worker ran on")
    offset_ms: float = Field(description="node clock − coordinator clock at the round trip's midpoint")
    uncertainty_ms: float = Field(description="± half that round trip: the true offset lies within")
    round_trips: int


class ClientCheck(Model):
    """The client's own validity over a load run: split across worker processes, or sent
    by one."""

    workers: int = Field(ge=1, description="worker processes that sent the point (1: the single-process run)")
    executor: Literal["processes", "ray"] = "processes"
    event_loop: EventLoop
    loop_lag_interval_ms: float = 1000 * LAG_INTERVAL_S
    loop_lag_ms: Distribution = Field(description="every worker's lag samples pooled")
    write_delay_ms: Distribution = Field(
        description="written_s − sent_s per request: connecting (new connections) and handing its last byte "
        "to the kernel (the body is built and encoded before sent_s; before, the gap held "
        "its encoding); the send lag and every latency run from sent_s"
    )
    per_worker: list[WorkerCheck]
    clock_offsets: list[ClockOffset] | None = Field(
        None,
        description="executor ray: each worker's node clock offset, applied to its start (its records run "
        "from the run's t0 as that node's clock reads it, to within the uncertainty)",
    )
    client_bound: bool
    client_bound_rule: str = LOOP_RULE
    client_bound_reasons: list[str] = Field(default_factory=list)
