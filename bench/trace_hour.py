"""An hour of a conversation trace at Mooncake's scale, planned and replayed (issue 41 item 6).

The real Mooncake conversation trace is not available offline on this host, so `hour_trace` generates one
with its shape: 12,000 requests over one hour, ~11,300 prompt tokens a request (136 M in all, over the
2^27 = 134,217,728 a run was limited to before), hash_ids of 512-token blocks with a conversation's first
4 blocks shared by its turns, output lengths ~350 tokens.

Two parts:
  plan    — build_plan in this process under tracemalloc: peak of Python allocations and its time
  replay  — `factsheet probe load --workload trace` (time_scale 0.02: the hour in 72 s) against the known-timing
            mock server (ttft 20 ms, 32 tokens a chunk 0.5 ms a token apart, its own process), the probe
            process's peak RSS (its process tree, sampled every 0.2 s) and the run's own figures

Usage: PYTHONPATH=. .venv/bin/python bench/trace_hour.py [--parts plan,replay] > bench/trace_hour_results.txt
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import psutil

from probes.load.workloads.context import BuildContext
from probes.load.workloads.profiles import TraceProfile
from probes.load.workloads.registry import build_plan
from probes.targets.ports import free_port

ROOT = Path(__file__).resolve().parents[1]
REQUESTS, SPAN_MS, BLOCK = 12_000, 3_600_000, 512
TIME_SCALE = 0.02


def hour_trace(path, n: int = REQUESTS, seed: int = 41) -> int:
    """Mooncake's conversation-trace shape, generated; returns the prompt tokens asked for in all."""
    rng = np.random.default_rng(seed)
    ts = np.sort(rng.uniform(0, SPAN_MS, n)).astype(int)
    ts[0], ts[-1] = 0, SPAN_MS
    inputs = np.clip(rng.lognormal(math.log(9_500), 0.6, n), 64, 120_000).astype(int)
    outputs = np.clip(rng.lognormal(math.log(350), 0.5, n), 1, 4_000).astype(int)
    fresh = 1_000_000
    with open(path, "w") as f:
        for i in range(n):
            blocks = -(-int(inputs[i]) // BLOCK)
            shared = min(blocks, 4)  # a conversation's first 4 blocks recur in its every turn
            ids = [(i % 2_500) * 16 + j for j in range(shared)] + list(range(fresh, fresh + blocks - shared))
            fresh += blocks - shared
            row = {"timestamp": int(ts[i]), "input_length": int(inputs[i]), "output_length": int(outputs[i])}
            f.write(json.dumps({**row, "hash_ids": ids}) + "\n")
    return int(inputs.sum())


def plan(path: Path) -> None:
    t0 = time.perf_counter()
    tracemalloc.start()
    try:
        built = build_plan(
            TraceProfile(path=str(path), block_size=BLOCK, time_scale=TIME_SCALE),
            BuildContext(REQUESTS, 0, 8, 8),
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(
        f"## plan: {len(built.prompts):,} prompts, peak of Python allocations {peak / 2**20:.1f} MiB "
        f"(tracemalloc), {time.perf_counter() - t0:.0f} s (under tracemalloc); digest {built.workload.prompts_digest}"
    )


def _tree_rss(proc: psutil.Process) -> int:
    try:
        procs = [proc, *proc.children(recursive=True)]
        return sum(p.memory_info().rss for p in procs)
    except psutil.Error:
        return 0


def replay(path: Path, out: Path) -> None:
    port = free_port()
    server_code = (
        "from probes.targets.mock_server import MockServerConfig, serve_forever; "
        f"serve_forever(MockServerConfig(ttft_ms=20, itl_ms=0.5, tokens_per_chunk=32, slots=100_000), port={port})"
    )
    server = subprocess.Popen([sys.executable, "-c", server_code], cwd=ROOT)
    try:
        time.sleep(2)
        cmd = [
            str(ROOT / ".venv/bin/factsheet"), "probe", "load", "--base-url", f"http://127.0.0.1:{port}",
            "--model", "mock-model", "--workload", "trace", "--workload-option", f"path={path}",
            "--workload-option", f"time_scale={TIME_SCALE}", "--num-prompts", str(REQUESTS),
            "--no-scrape", "-o", str(out),
        ]  # fmt: skip
        shown = " ".join(cmd[1:]).replace(str(path.parent) + "/", "").replace(str(ROOT) + "/", "")
        print(f"## replay: factsheet {shown}")
        t0 = time.perf_counter()
        probe = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ps, peak = psutil.Process(probe.pid), 0
        while probe.poll() is None:
            peak = max(peak, _tree_rss(ps))
            time.sleep(0.2)
        log = probe.stdout.read()
        print(
            f"  exit {probe.returncode}, {time.perf_counter() - t0:.0f} s, peak RSS of the probe's processes {peak / 2**20:.0f} MiB"
        )
        tail = [line for line in log.splitlines()[-12:] if line.strip() and not line.startswith("wrote ")]
        print(
            "  " + "\n  ".join(tail)
        )  # the probe's own summary (its output folder, a machine path, left out)
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="plan,replay")
    args = ap.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(f"# PYTHONPATH=. .venv/bin/python bench/trace_hour.py --parts {args.parts}")
    print(
        f"# commit {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load1 {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "conversation_hour.jsonl"
        tokens = hour_trace(path)
        print(
            f"# generated trace (the real Mooncake trace is not available offline): {REQUESTS:,} requests over {SPAN_MS / 3.6e6:g} h, {tokens:,} prompt tokens ({tokens / (1 << 27):.3f} × the old 2^27 limit), {path.stat().st_size / 2**20:.1f} MiB"
        )
        if "plan" in args.parts:
            plan(path)
        if "replay" in args.parts:
            replay(path, Path(tmp) / "out")


if __name__ == "__main__":
    main()
