"""The known-timing mock server across processes, so that the reference is not the bottleneck.

Each process serves the same port (SO_REUSEPORT: the kernel spreads connections over them) on its own
event loop, and writes one JSON line per streamed request to its own timing log as the request ends: its
arrival, the send time of its first and last chunk, and how late its latest chunk was against its
deadline (mock_server._Sent). `read_timing` reads the logs back: the server's own TTFT per request
(first chunk sent − arrival) is the known truth a client's figure is compared with, and the server says
it fell behind its schedule when a chunk left more than LATE_TOLERANCE_MS after its deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import signal
from collections.abc import Iterator
from pathlib import Path

from aiohttp import web
from pydantic import Field

from probes.core.measurement import Distribution, Model, summarize
from probes.targets.mock_server import BACKLOG, MockServerConfig, build_app
from probes.targets.ports import free_port

# A chunk later than this against its deadline means the server, not the client, moved the timing by
# more than the resolution a TTFT of ~100 ms is compared to (1 %).
LATE_TOLERANCE_MS = 1.0
_START_S = 30.0


class TimedRequest(Model):
    """One line of a process's timing log (times: time.perf_counter() of that process, s)."""

    pid: int
    n: int = Field(description="arrival number in its process, from 1")
    arrived_s: float
    admitted_s: float = Field(description="when it got a slot")
    first_chunk_s: float | None
    last_chunk_s: float
    late_ms: float
    chunks: int


class ServerTiming(Model):
    """What the server's own logs say: its TTFT per request and whether it kept its schedule."""

    processes: int
    requests: int
    ttft_ms: Distribution = Field(description="first chunk sent − request arrival, on the server")
    late_ms: Distribution = Field(description="per request: the latest chunk's send time − its deadline")
    fell_behind: bool = Field(description=f"a chunk left > {LATE_TOLERANCE_MS:g} ms after its deadline")
    late_requests: int = Field(description=f"requests with a chunk > {LATE_TOLERANCE_MS:g} ms late")
    entries: list[TimedRequest] = Field(exclude=True, default_factory=list)


def _child(cfg: MockServerConfig, port: int, log: str, ready, stop) -> None:
    """One server process: serve until `stop` is set (or SIGTERM), then close its log."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's Ctrl-C ends the fleet through `stop`
    with open(log, "ab", buffering=0) as out:

        async def main() -> None:
            runner = web.AppRunner(build_app(cfg, timing=out.write), access_log=None, shutdown_timeout=1.0)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port, reuse_port=True, backlog=BACKLOG).start()
            ready.release()
            while not stop.is_set():
                await asyncio.sleep(0.05)
            await runner.cleanup()

        asyncio.run(main())


@contextlib.contextmanager
def running_fleet(
    cfg: MockServerConfig, processes: int, log_dir: Path, port: int | None = None
) -> Iterator[str]:
    """Serve `cfg` from `processes` processes on one port of 127.0.0.1; yields the base URL. Each process
    writes its timing log into `log_dir` (read it with `read_timing` after the block)."""
    port = port or free_port()
    ctx = mp.get_context("spawn")  # a fork of a process with threads (a test's) may deadlock
    ready, stop = ctx.Semaphore(0), ctx.Event()
    procs = [
        ctx.Process(
            target=_child, args=(cfg, port, str(log_dir / f"server-{k}.jsonl"), ready, stop), daemon=True
        )
        for k in range(processes)
    ]
    for p in procs:
        p.start()
    try:
        for _ in procs:
            if not ready.acquire(timeout=_START_S):
                raise RuntimeError("mock server fleet did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join(5)


def read_timing(log_dir: Path) -> ServerTiming:
    """The fleet's timing logs, read back (each process's lines, in the order it wrote them)."""
    files = sorted(log_dir.glob("server-*.jsonl"))
    entries = [
        TimedRequest.model_validate_json(line) for f in files for line in f.read_bytes().splitlines() if line
    ]
    ttft = [1000 * (e.first_chunk_s - e.arrived_s) for e in entries if e.first_chunk_s is not None]
    late = [e.late_ms for e in entries]
    n_late = sum(1 for x in late if x > LATE_TOLERANCE_MS)
    return ServerTiming(
        processes=len(files),
        requests=len(entries),
        ttft_ms=summarize(ttft, unit="ms", definition="first chunk sent − arrival, server clock"),
        late_ms=summarize(late, unit="ms", definition="latest chunk's send time − its deadline"),
        fell_behind=n_late > 0,
        late_requests=n_late,
        entries=entries,
    )
