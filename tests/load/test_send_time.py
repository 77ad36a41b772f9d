"""A request's send time is stamped once its body is built (issue 31 item 1): a prompt generated when its
request is due costs the client time, which the server's TTFT must not carry. Known truth: the mock
server's TTFT, and a prompt that takes BUILD_S to generate."""

import asyncio
import math
import sys
import time
from collections.abc import Sequence

import pytest

from probes.load.point import SLO
from probes.load.runner import run_point
from probes.load.workloads.workload import synthetic_prompts
from probes.targets.mock_server import MockServerConfig, running
from tests.load.loadharness import ITL_MS, TTFT_MS, point

BUILD_S = 0.03


class SlowPrompts(Sequence[str]):
    """Prompts that take BUILD_S each to generate, as a long trace prompt does when it is due."""

    def __init__(self, prompts: list[str]):
        self.prompts = prompts

    def __len__(self) -> int:
        return len(self.prompts)

    def __getitem__(self, i):
        time.sleep(BUILD_S)
        return self.prompts[i]


def _run(p):
    prompts, workload = synthetic_prompts(p.num_requests, p.input_len, p.seed)
    cfg = MockServerConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)  # see tests/load/loadharness.py
    try:
        with running(cfg) as url:
            run = run_point(url, cfg.model, p, SLO(), prompts=SlowPrompts(prompts), workload=workload)
            return asyncio.run(run)
    finally:
        sys.setswitchinterval(interval)


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_building_the_body_is_not_in_ttft(mode):
    # open: evenly 125 ms apart, each request done (85 ms) before the next is built, on its kept-alive connection
    kw = {"concurrency": 1} if mode == "closed" else {"rate": 8.0, "burstiness": math.inf}
    r = _run(point(mode=mode, num_requests=8, **kw))
    ttft = r.metrics.ttft_ms
    assert r.metrics.completed == 8
    # Stamped before the build, every TTFT would read TTFT_MS + 30 ms or more.
    assert TTFT_MS - 1 <= ttft.p(50) <= TTFT_MS + 12, f"ttft p50 {ttft.p(50):.1f} ms"
    if mode == "open":  # uncapped open loop: built before its send time, so not in the send lag either
        lag = r.arrivals.send_lag_ms
        assert lag.p(50) < 10, f"send lag p50 {lag.p(50):.1f} ms"
