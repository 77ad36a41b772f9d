"""Where the tests find HumanEval+ v0.1.10: the shared data folder beside the checkout (as in CI)."""

from pathlib import Path

DATASET = (
    Path(__file__).resolve().parents[1]
    / ".."
    / "shared"
    / "data"
    / "humanevalplus"
    / "HumanEvalPlus-v0.1.10.jsonl.gz"
).resolve()
