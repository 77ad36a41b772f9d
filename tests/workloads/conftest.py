from pathlib import Path

EXAMPLE_TRACE = Path(__file__).resolve().parents[2] / "models/traces/example.jsonl"
