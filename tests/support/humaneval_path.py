"""Where the tests find HumanEval+ v0.1.10: the shared data folder beside the checkout (as in CI)."""

import functools
import gzip
import json
from pathlib import Path

DATASET = (
    Path(__file__).resolve().parents[2]
    / ".."
    / "shared"
    / "data"
    / "humanevalplus"
    / "HumanEvalPlus-v0.1.10.jsonl.gz"
).resolve()


@functools.cache
def records() -> tuple[dict, ...]:
    """The dataset's tasks, read once (when a test first asks: a test without the data is skipped first)."""
    with gzip.open(DATASET, "rt") as fh:
        return tuple(json.loads(line) for line in fh)


def task_in(text: str) -> dict:
    """The task whose prompt `text` carries: what a fake endpoint answers a HumanEval+ request with."""
    return next(r for r in records() if r["prompt"].strip() in text)
