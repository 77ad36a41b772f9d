"""Load from one worker vs N workers against the multi-process mock server, whose own log is the truth.

The mock server (TTFT 100 ms, ITL 20 ms, 64-token replies) runs as `--server-processes` processes on one
port (probes.targets.mock_fleet); each logs the send time of every chunk and says when it fell behind its
schedule. For each closed-loop concurrency and each worker count, one run of 3 × C requests: the client's
TTFT p50/p99 against the server's own (first chunk sent − request arrival, on the same host clock, over
the requests of that run), the workers' event-loop lag and write delay, and the client-bound verdict
(`result.client`, stated for any worker count: one worker samples its own loop as each of many does).

Server and clients share the host's cores: on a 2-core host this measures what holds there, not what a
16-core host gives. The load average is printed with the figures.

Usage: .venv/bin/python bench/load_scale.py [--concurrency 64,256] [--workers 1,2] [--server-processes 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from probes.core.measurement import summarize
from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.targets.mock_fleet import LATE_TOLERANCE_MS, read_timing, running_fleet
from probes.targets.mock_server import MockServerConfig

TTFT_MS, ITL_MS, TOKENS = 100.0, 20.0, 64


def _fmt(x: float | None) -> str:
    return "   —  " if x is None else f"{x:7.2f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--concurrency", default="64,256")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--server-processes", type=int, default=2)
    args = ap.parse_args()
    cfg = MockServerConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS, slots=100_000)
    print(f"# {' '.join(['bench/load_scale.py', *sys.argv[1:]])}")
    print(f"# mock server TTFT {TTFT_MS:g} ms ITL {ITL_MS:g} ms, {TOKENS} tokens, {args.server_processes} "
          f"processes; host {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} before")  # fmt: skip
    with tempfile.TemporaryDirectory() as logs, running_fleet(cfg, args.server_processes, Path(logs)) as url:
        for c in (int(x) for x in args.concurrency.split(",")):
            for w in (int(x) for x in args.workers.split(",")):
                point = LoadPoint.at(concurrency=c, num_requests=3 * c, output_len=TOKENS, input_len=16)
                before = time.perf_counter()
                r = asyncio.run(run_point(url, "mock-model", point, SLO(), workers=w))
                mine = [e for e in read_timing(Path(logs)).entries if e.arrived_s >= before]
                server = summarize(
                    [1000 * (e.first_chunk_s - e.arrived_s) for e in mine if e.first_chunk_s is not None],
                    unit="ms", definition="server TTFT",
                )  # fmt: skip
                late = sum(1 for e in mine if e.late_ms > LATE_TOLERANCE_MS)
                m = r.metrics
                err50 = m.ttft_ms.p(50) - server.p(50)
                err99 = m.ttft_ms.p(99) - server.p(99)
                line = (
                    f"C={c:4d} workers={w}  ok {m.completed:4d}/{3 * c}  client TTFT p50 {_fmt(m.ttft_ms.p(50))} "
                    f"p99 {_fmt(m.ttft_ms.p(99))} | server p50 {_fmt(server.p(50))} p99 {_fmt(server.p(99))} | "
                    f"error p50 {err50:+7.2f} p99 {err99:+7.2f} ms | server late > {LATE_TOLERANCE_MS:g} ms: "
                    f"{late}/{len(mine)} (max {max((e.late_ms for e in mine), default=0):.1f} ms)"
                )
                print(line)
                cl = r.client
                verdict = (
                    "CLIENT-BOUND: " + "; ".join(cl.client_bound_reasons) if cl.client_bound else "valid"
                )
                print(f"    loop lag p50 {_fmt(cl.loop_lag_ms.p(50))} p99 {_fmt(cl.loop_lag_ms.p(99))} ms, "
                      f"write delay p50 {_fmt(cl.write_delay_ms.p(50))} p99 {_fmt(cl.write_delay_ms.p(99))} ms, "
                      f"{cl.event_loop}; {verdict}")  # fmt: skip
                sys.stdout.flush()
    print(f"# load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
