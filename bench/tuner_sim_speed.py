"""Simulator speed: discrete events per second of wall time (target ≥ 100k events/s).

Events are what the event loop processes: request sends, admission (prefill) steps, jumps over runs
of identical decode steps, and completions. Also reported: simulated requests per second, and configs
screened per second at the tuner's default workload (200 requests per evaluation).
"""

from __future__ import annotations

import time

from tuner_common import EMBEDDED_LIKE, WORKLOAD

from tuner import OperatingPoint, TuningLoad, simulate


def _measure(point: OperatingPoint, workload: TuningLoad, reps: int) -> tuple[float, float, float]:
    events = requests = 0
    t0 = time.perf_counter()
    for seed in range(reps):
        run = simulate(EMBEDDED_LIKE, point, workload, seed=seed)
        events += run.events
        requests += workload.num_requests
    wall = time.perf_counter() - t0
    return events / wall, requests / wall, reps / wall


def main() -> None:
    big = TuningLoad(mode="closed", input_len=128, output_len=64, num_requests=20_000)
    open_big = TuningLoad(mode="open", rate_rps=2.0, input_len=128, output_len=64, num_requests=20_000)
    cases = [
        ("closed c=16 m=128 spec off", OperatingPoint(concurrency=16, max_num_seqs=128, spec_k=0), big),
        ("closed c=16 m=4 spec off", OperatingPoint(concurrency=16, max_num_seqs=4, spec_k=0), big),
        ("closed c=8 m=8 ngram k=3", OperatingPoint(concurrency=8, max_num_seqs=8, spec_k=3), big),
        ("open 2 req/s c=64 m=16", OperatingPoint(concurrency=64, max_num_seqs=16, spec_k=0), open_big),
    ]
    print(f"{'case':32s} {'events/s':>12s} {'requests/s':>12s}")
    for name, point, w in cases:
        ev, rq, _ = _measure(point, w, reps=3)
        print(f"{name:32s} {ev:12,.0f} {rq:12,.0f}")
    _, _, cfg_rate = _measure(OperatingPoint(concurrency=16, max_num_seqs=128, spec_k=0), WORKLOAD, reps=200)
    print(f"configs simulated per second at {WORKLOAD.num_requests} requests each: {cfg_rate:,.0f}")


if __name__ == "__main__":
    main()
