import asyncio
import sys
import time

import numpy as np

from probes.load.metrics import compute_metrics
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord
from probes.load.runner import PointResult, run_point
from probes.targets.mock_server import MockServerConfig, running

# Known timing of the test server; in-process it shares the GIL with the client, so loads stay light.
TTFT_MS = 50.0
ITL_MS = 5.0
OUT = 8


def run(point: LoadPoint, slo: SLO | None = None, **server) -> PointResult:
    cfg = MockServerConfig(
        ttft_ms=server.pop("ttft_ms", TTFT_MS), itl_ms=server.pop("itl_ms", ITL_MS), **server
    )
    # Server thread and client share the GIL: hand it over every 0.2 ms, not every 5 ms, or the
    # handover itself shows up as latency.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)
    try:
        with running(cfg) as url:
            return asyncio.run(run_point(url, cfg.model, point, slo or SLO()))
    finally:
        sys.setswitchinterval(interval)


def point(**kw) -> LoadPoint:
    kw.setdefault("output_len", OUT)
    kw.setdefault("input_len", 16)
    return LoadPoint(**kw)


# A client whose event loop falls behind: blocked STALL_S of every EVERY_S by a coroutine sharing it. A timer
# due while it is blocked fires when it ends, so about one lag sample in EVERY_S / LAG_INTERVAL_S reads up to
# STALL_S late: more than 1 % of them, so the lag's p99 is the stall.
STALL_S, EVERY_S = 0.100, 0.200


async def block_the_loop() -> None:
    """Until cancelled: holds the loop STALL_S of every EVERY_S."""
    while True:
        await asyncio.sleep(EVERY_S - STALL_S)
        time.sleep(STALL_S)  # holds the loop (not the GIL: the mock server's thread serves on time)


def measured(e2el: np.ndarray, slo: SLO):
    """A run's result as a capacity search reads it (`.metrics`, `.arrivals`), from each request's known E2EL:
    requests sent 10 ms apart, the first chunk 10 ms after sending, two output tokens."""
    recs = [
        RequestRecord(
            index=i,
            sent_s=i * 0.01,
            first_chunk_s=i * 0.01 + 0.01,
            chunk_s=[i * 0.01 + 0.01, i * 0.01 + v],
            end_s=i * 0.01 + v,
            output_tokens=2,
        )
        for i, v in enumerate(e2el)
    ]

    class Measured:
        metrics = compute_metrics(recs, slo)
        arrivals = None

    return Measured()
