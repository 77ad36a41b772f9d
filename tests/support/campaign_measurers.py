"""Measurers with known truth for campaign and predictor tests (never used by the tool itself)."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path


class Synthetic:
    """latency_ms = 10 * max_new_tokens * beams (+2 % noise); cpu_s ~ latency; pass_at_1 constant + noise.
    `log`: append one line per call (to count measurements); `kill_file`: the first call that finds it absent
    creates it and kills its own process with SIGKILL (a worker dying mid-campaign); `sleep_s` per call."""

    def __init__(self, log: str | None = None, kill_file: str | None = None, sleep_s: float = 0.0):
        self.log, self.kill_file, self.sleep_s = log, kill_file, sleep_s

    def measure(self, kwargs: dict, *, seed: int) -> dict:
        if self.kill_file and not Path(self.kill_file).exists():
            Path(self.kill_file).write_text(str(os.getpid()))
            os.kill(os.getpid(), 9)
        if self.log:
            with open(self.log, "a") as fh:
                fh.write(f"{os.getpid()}\n")
        time.sleep(self.sleep_s)
        rng = random.Random(seed)
        req = kwargs.get("request", {})
        eng = kwargs.get("engine", {})
        tokens = req.get("max_new_tokens", 64)
        beams = req.get("num_beams", 1)
        seqs = eng.get("max_num_seqs", 16)
        base = 10.0 * tokens * beams * (1 + 0.3 * (seqs == 64)) * (1 + 0.5 * bool(req.get("temperature")))
        lat = base * (1 + rng.gauss(0, 0.02))
        return {"e2el_p50_ms": lat, "cpu_s": lat / 1000 * 1.7, "pass_at_1": 0.05 + rng.gauss(0, 0.02)}


def synthetic(**options) -> Synthetic:
    return Synthetic(**options)


class WithLatencyRecords:
    """Latency figures through the load probe's records (tuner.campaign.latency), with known truth: each of
    3 requests has TTFT 20 ms and 5 ms per output token for 10 · beams tokens, longer with temperature;
    cpu_s ~ the E2EL (+2 % noise), as `Synthetic`."""

    def measure(self, kwargs: dict, *, seed: int) -> dict:
        from probes.load.records import RequestRecord
        from tuner.campaign.latency import measured

        rng = random.Random(seed)
        req = kwargs.get("request", {})
        tokens = 10 * req.get("num_beams", 1)
        step_s = 0.005 * (1 + 0.5 * bool(req.get("temperature"))) * (1 + rng.gauss(0, 0.02))
        records, sent = [], 0.0
        for i in range(3):
            first = sent + 0.02
            end = first + step_s * (tokens - 1)
            records.append(
                RequestRecord(
                    index=i, sent_s=sent, first_chunk_s=first, chunk_s=[first, end], end_s=end,
                    output_tokens=tokens, output_tokens_source="usage",
                )
            )  # fmt: skip
            sent = end
        figures = measured(records, source="known-truth test measurer")
        figures["cpu_s"] = figures["e2el_p50_ms"] / 1000 * 1.7 * (1 + rng.gauss(0, 0.02))
        return figures


def with_latency_records() -> WithLatencyRecords:
    return WithLatencyRecords()
