"""Time to judge the 164 HumanEval+ canonical solutions in the sandbox (2 workers).

Reference: evalplus 0.3.1 takes 63 s on 2 cores; goal <= 40 s. Prints the cold figure (canonical
outputs computed, then judged) and the warm one (outputs from the cache, judging only).
Usage: .venv/bin/python bench/humaneval_canonical.py [DATASET]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from probes.accuracy.dataset import load_dataset
from probes.accuracy.harness import Job, expected_outputs, judge_many, program_for
from probes.accuracy.sandbox import SandboxLimits

_DEFAULT = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "humanevalplus"
WORKERS = 2
EVALPLUS_REFERENCE_S = 63.0


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else str(_DEFAULT / "HumanEvalPlus-v0.1.10.jsonl.gz")
    cache = tempfile.mkdtemp(prefix="factsheet-bench-")  # cold start, and no ~90 MB left behind
    os.environ["FACTSHEET_CACHE_DIR"] = cache
    data = load_dataset(path)
    limits = SandboxLimits()
    start = time.monotonic()
    expected = expected_outputs(data, limits, concurrency=WORKERS)
    expected_s = time.monotonic() - start
    jobs = [Job(t, 0, program_for(t, completion=t.canonical_solution)) for t in data.tasks]
    start = time.monotonic()
    verdicts, isolation = judge_many(jobs, expected, limits, concurrency=WORKERS)
    judge_s = time.monotonic() - start
    passed = sum(v.plus.status == "pass" for v in verdicts)
    print(f"tasks: {len(verdicts)}, canonical passing base+plus: {passed}")
    print(f"canonical outputs (cold, once per dataset sha256): {expected_s:.1f} s")
    print(
        f"judging 164 canonical solutions (warm cache): {judge_s:.1f} s, "
        f"ratio vs evalplus reference {judge_s / EVALPLUS_REFERENCE_S:.2f}"
    )
    print(
        f"cold total: {expected_s + judge_s:.1f} s, ratio {(expected_s + judge_s) / EVALPLUS_REFERENCE_S:.2f}"
    )
    print("isolation:", "; ".join(isolation))
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
