"""The build's plan against the time it took (issue 41 items 1 and 4), on mocks whose timing is known truth: the
serving model's `gpu-scale` profile (probes/targets/serving_model.py; every cost × `scale`: a host 2× slower or
2× faster) and the slots mock (8 slots of 100 + 7 × 10 ms). Each case is one `factsheet build` (the API, in this
process, beside the mock) of a small endpoint spec with a capacity search and no max_value; the table states
the plan's estimate (`plan.estimate_s`, printed before the first measured request), what its part took
(`plan.taken_s`), the error, the probes planned and made, the bracket found, and the build's wall time
against its budget.

Cases: gpu-scale (128 / 64 tokens, 2.5 s p99 E2EL SLO, search from 32 users, 10 probes at most) without a
budget, with 30 s, with confirmation steps of 3 runs of 460 requests; 2× slower and 2× faster with 40 s; the
slots mock (300 ms p99 E2EL, search from 2) with max_points 8 and 16, no budget.

Usage: PYTHONPATH=. .venv/bin/python bench/plan_vs_taken.py [--cases gpu,gpu-30,...] > bench/plan_vs_taken_results.txt
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from factsheet import api  # noqa: E402
from probes.targets.mock_server import MockServerConfig, running  # noqa: E402
from tests.support.mock_spec import e2el_slo, endpoint_spec  # noqa: E402
from tests.support.serving_process import serving_process  # noqa: E402

GPU_LOAD = {"input_len": 128, "output_len": 64, "slo": e2el_slo(2500)}
GPU_SEARCH = {"knob": "concurrency", "start": 32, "num_requests": 64, "max_points": 10}
SLOTS = MockServerConfig(model="mock-model", ttft_ms=100, itl_ms=10, slots=8)
SLOTS_SEARCH = {"knob": "concurrency", "start": 2, "num_requests": 4}

# name -> (mock, load section overrides, budget s)
CASES = {
    "gpu": (1.0, {**GPU_LOAD, "capacity": GPU_SEARCH}, None),
    "gpu-30": (1.0, {**GPU_LOAD, "capacity": GPU_SEARCH}, 30.0),
    "gpu-confirm": (
        1.0,
        {**GPU_LOAD, "capacity": {**GPU_SEARCH, "confirm_requests": 460, "repeats": 3}},
        None,
    ),
    "gpu-2x-slower-40": (2.0, {**GPU_LOAD, "capacity": GPU_SEARCH}, 40.0),
    "gpu-2x-faster-40": (0.5, {**GPU_LOAD, "capacity": GPU_SEARCH}, 40.0),
    "slots-8": (None, {"slo": e2el_slo(300), "capacity": {**SLOTS_SEARCH, "max_points": 8}}, None),
    "slots-16": (None, {"slo": e2el_slo(300), "capacity": {**SLOTS_SEARCH, "max_points": 16}}, None),
}


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def case(name: str, folder: Path) -> str:
    scale, load, budget = CASES[name]
    # the serving model in a process of its own (tests/support/serving_process.py), the slots mock beside
    mock = running(SLOTS) if scale is None else serving_process("gpu-scale", scale)
    with mock as url:
        spec = endpoint_spec(folder, url, points=((1, 4),), overrides={"load": load})
        api.build_factsheet(spec, folder / "out", budget_s=budget)
    sheet = json.loads((folder / "out" / "factsheet.json").read_text())
    plan, cap = sheet["plan"], sheet["load"]["capacity"]["result"]
    est, taken = plan["estimate_s"], plan["taken_s"]
    probes = next(i for i in plan["items"] if i["what"].endswith(": search probes"))
    made = sum(1 for p in cap["points"] if not p["confirmation"])
    lo, hi = cap["bracket"]
    wall = sheet["provenance"]["wall_time_s"]
    kept = "—" if budget is None else f"{wall:.1f} of {budget:g}"
    return (
        f"| {name} | {est:.1f} | {taken:.1f} | {100 * (est - taken) / taken:+.0f} % | {probes['runs']} / {made} | "
        f"[{lo:g}, {'—' if hi is None else f'{hi:g}'}) | {kept} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args()
    print(f"# PYTHONPATH=. .venv/bin/python bench/plan_vs_taken.py --cases {args.cases}")
    print(
        f"# commit {_commit()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
        f"load1 {os.getloadavg()[0]:.1f}"
    )
    print("| case | plan (s) | taken (s) | error | probes planned / made | bracket | wall s of budget |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for name in args.cases.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            print(case(name, Path(tmp)), flush=True)


if __name__ == "__main__":
    main()
