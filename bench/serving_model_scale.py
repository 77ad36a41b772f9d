"""The mock server's serving model at GPU scale on this host (issue 41 item 5): hundreds of streams on one event
loop, and the stated law as the client measures it.

For the `gpu-scale` profile (probes/targets/serving_model.py), closed loops of 100 to 1,000 users (128 prompt /
64 output tokens, 2 requests a user), server and client in this one process (the server on its own thread and
loop): the client's median TPOT against the law's step at min(users, max_num_seqs) (TPOT = base_ms + per_seq_ms ·
batch; prefill of new arrivals adds to some steps), p50/p99 E2EL, the process's CPU seconds per second of run,
and the largest queue /metrics showed (vllm:num_requests_waiting, scraped every 0.25 s).

Usage: PYTHONPATH=. .venv/bin/python bench/serving_model_scale.py [--users 100,300,600,1000] [--chunk 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import time
from pathlib import Path

import aiohttp
import numpy as np

from probes.load.metrics import request_latencies
from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.targets.mock_server import MockServerConfig, running
from probes.targets.serving_model import PROFILES

ROOT = Path(__file__).resolve().parents[1]
PROFILE = PROFILES["gpu-scale"]


async def _run_watching_queue(url: str, point: LoadPoint):
    """The run, and the largest waiting gauge its /metrics showed meanwhile."""
    run = asyncio.create_task(run_point(url, "mock-model", point, SLO()))
    largest = 0.0
    async with aiohttp.ClientSession() as session:
        while not run.done():
            async with session.get(url + "/metrics") as resp:
                for line in (await resp.text()).splitlines():
                    if line.startswith("vllm:num_requests_waiting"):
                        largest = max(largest, float(line.rsplit(" ", 1)[1]))
            await asyncio.sleep(0.25)
    return await run, largest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", default="100,300,600,1000")
    ap.add_argument("--chunk", type=int, default=1, help="tokens a streamed chunk carries")
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    print(
        f"# PYTHONPATH=. .venv/bin/python bench/serving_model_scale.py --users {args.users} --chunk {args.chunk}"
    )
    print(
        f"# commit {commit.stdout.strip()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} cores, load1 {os.getloadavg()[0]:.1f}; profile gpu-scale: {PROFILE.describe()}"
    )
    print(
        "| users | requests | TPOT p50 (ms) | law at min(users, 512) (ms) | E2EL p50 / p99 (s) | waiting max | CPU s / wall s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    with running(MockServerConfig(serving=PROFILE, metrics=True, tokens_per_chunk=args.chunk)) as url:
        for users in (int(u) for u in args.users.split(",")):
            point = LoadPoint.at(
                concurrency=users, num_requests=2 * users, input_len=128, output_len=64, seed=0
            )
            cpu, wall = time.process_time(), time.perf_counter()
            res, waiting = asyncio.run(_run_watching_queue(url, point))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            lats = [request_latencies(r) for r in res.records if r.ok]
            e2el = [x["e2el_ms"] / 1000 for x in lats]
            print(
                f"| {users} | {len(lats)} of {2 * users} | {statistics.median(x['tpot_ms'] for x in lats):.2f} | "
                f"{PROFILE.step_ms(min(users, PROFILE.max_num_seqs), 0):.2f} | {np.percentile(e2el, 50):.2f} / "
                f"{np.percentile(e2el, 99):.2f} | {waiting:.0f} | {cpu:.1f} / {wall:.1f} |"
            )


if __name__ == "__main__":
    main()
