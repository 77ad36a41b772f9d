"""Injected faults are counted by cause, exactly; a target that dies ends the run cleanly."""

import asyncio
import multiprocessing
import time

import pytest

from probes.load.point import SLO
from probes.load.runner import run_point
from probes.targets.mock_server import MockServerConfig, serve_forever
from probes.targets.ports import free_port
from tests.load.loadharness import point, run

pytestmark = pytest.mark.system


def test_each_injected_fault_is_recorded_with_its_cause():
    # One user, so the server's request number is the record's index + 1.
    r = run(
        point(mode="closed", concurrency=1, num_requests=35, request_timeout_s=0.3),
        SLO(e2el_ms=10_000),
        fail_every=5,  # 5, 10, ..., 35 → 7 HTTP 500
        drop_every=7,  # 7, 14, 21, 28 (35 already failed) → 4 cut streams
        reset_every=11,  # 11, 22, 33 → 3 resets before any response
        stall_every=13,  # 13, 26 → 2 timeouts
    )
    m = r.metrics
    assert m.errors == {"http": 7, "stream_cut": 4, "reset": 3, "timeout": 2}
    assert (m.measured, m.completed, m.failed) == (35, 19, 16)
    assert r.sent == 35 and r.not_sent == 0 and r.aborted is None
    assert m.good == 19  # failures are never good
    assert m.slo_attainment == pytest.approx(19 / 35)
    by_index = {x.index: x for x in r.records}
    assert by_index[4].http_status == 500 and by_index[6].error_kind == "stream_cut"
    assert len(by_index[6].chunk_s) == 2  # the cut came after `drop_after` tokens


def _serve(port: int) -> None:
    serve_forever(MockServerConfig(ttft_ms=20, itl_ms=5), port=port)


def _start_server() -> tuple[multiprocessing.Process, str]:
    port = free_port()
    proc = multiprocessing.get_context("spawn").Process(target=_serve, args=(port,), daemon=True)
    proc.start()
    import httpx

    deadline = time.monotonic() + 30  # a spawned interpreter importing aiohttp on a busy machine
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=0.5)
            break
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("mock server did not come up") from None
            time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}"


async def _run_and_kill(url: str, proc, lp, kill_after_s: float):
    task = asyncio.create_task(run_point(url, "mock-model", lp, SLO()))
    await asyncio.sleep(kill_after_s)
    proc.kill()
    return await asyncio.wait_for(task, timeout=10)


@pytest.mark.parametrize("mode", ["open", "closed"])
def test_target_dying_mid_run_ends_the_run_with_what_was_measured(mode):
    proc, url = _start_server()
    kw = {"rate": 50.0} if mode == "open" else {"concurrency": 4}
    lp = point(mode=mode, num_requests=2000 if mode == "closed" else 200, request_timeout_s=5, **kw)
    started = time.perf_counter()
    r = asyncio.run(_run_and_kill(url, proc, lp, kill_after_s=0.6))
    assert time.perf_counter() - started < 5  # no hang, no waiting out the schedule
    assert r.stop_reason == "target_unreachable" and "consecutive connection failures" in r.aborted
    assert r.metrics.completed > 0  # what was measured before the death is kept
    assert r.sent + r.not_sent == lp.num_requests
    assert all(x.ok or x.error_kind for x in r.records)  # every sent request is accounted for
    assert r.metrics.errors.get("connect", 0) >= lp.max_connect_failures
