"""What the two campaign benches (predictor_curve.py, predictor_live.py) share: their sampling and budget options,
a campaign run that stops at a time budget (and resumes after a worker that died), the host's uptime line."""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

from tuner.campaign.runner import run_campaign
from tuner.campaign.spec import CampaignSpec
from tuner.campaign.store import CampaignStore


class OutOfTime(Exception):
    """Raised from the progress callback once the budget is spent: the run stops after a finished measurement."""


def add_campaign_options(
    p: argparse.ArgumentParser, *, uniform: int, order: str, budget_min: float | None
) -> None:
    p.add_argument(
        "--uniform", type=int, default=uniform, help="uniform configurations beside the pairwise ones"
    )
    p.add_argument("--reps", type=int, default=2)
    p.add_argument(
        "--order", choices=("shuffled", "rounds"), default=order,
        help="rounds: every configuration once before any repetition (a budget stop keeps the most configurations)",
    )  # fmt: skip
    p.add_argument(
        "--budget-min", type=float, default=budget_min, help="stop measuring after this many minutes"
    )
    p.add_argument("--accuracy-tasks", type=int, default=0, help="HumanEval+ tasks per measurement (0: none)")
    p.add_argument("--accuracy-concurrency", type=int, default=1, help="generation requests in flight")


def measure_within(
    spec: CampaignSpec,
    out: Path,
    budget_s: float | None,
    *,
    attempts: int = 1,
    retry_on: tuple[type[Exception], ...] = (),
) -> tuple[float, str]:
    """Run (or resume) the campaign until it is complete or `budget_s` is spent; a `retry_on` error (a worker that
    died) resumes it, up to `attempts` runs in all. Returns (wall seconds, how it ended); the table is saved."""
    t0 = time.perf_counter()

    def progress(iid: str) -> None:
        done = len(CampaignStore(out).done())
        print(f"{time.perf_counter() - t0:7.0f} s  measured {iid} ({done} done)", flush=True)
        if budget_s is not None and time.perf_counter() - t0 > budget_s:
            raise OutOfTime

    ended = "complete"
    for attempt in range(attempts):
        try:
            run_campaign(spec, out, progress=progress)
            ended = "complete"
            break
        except OutOfTime:
            ended = f"stopped at the {budget_s / 60:g}-minute budget (rerun the command to resume)"
            break
        except retry_on as exc:  # resume measures only what is missing
            print(f"worker error (attempt {attempt + 1}): {exc}", flush=True)
            ended = f"worker error: {str(exc).splitlines()[0]}"
    CampaignStore(out).save_table()
    return time.perf_counter() - t0, ended


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
