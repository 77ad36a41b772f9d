import asyncio
import sys

from probes.load.point import SLO, LoadPoint
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
