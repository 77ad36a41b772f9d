"""How tests/server_view/fixtures/vllm-0.32-metrics.txt was captured (run once, by hand, holding the lock):

    flock /tmp/vllm.lock .venv/bin/python tests/server_view/capture_fixture.py

It starts the embedded target of models/smollm2-cpu.yaml, sends four completions that share a prefix (so the
prefix-cache counters and the latency histograms are non-zero), and saves the server's `/metrics` page as is.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import yaml

from probes.targets import VllmTarget, open_target

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "vllm-0.32-metrics.txt"


def serving_target() -> VllmTarget:
    """The shipped spec's target, served by the vLLM CPU build of this checkout (or FACTSHEET_VLLM_PYTHON)."""
    spec = yaml.safe_load((REPO / "models" / "smollm2-cpu.yaml").read_text())
    default = Path("/work/main/.venv-vllm/bin/python")
    spec["target"]["python"] = os.environ.get("FACTSHEET_VLLM_PYTHON", str(default))
    return VllmTarget.model_validate(spec["target"])


def main() -> int:
    with open_target(serving_target()) as live:
        prefix = "the quick brown fox jumps over the lazy dog " * 40
        for i in range(4):
            body = {"model": live.model, "prompt": prefix + f"question {i}", "max_tokens": 8}
            httpx.post(f"{live.base_url}/v1/completions", json=body, timeout=120).raise_for_status()
        page = httpx.get(f"{live.base_url}/metrics", timeout=30)
        page.raise_for_status()
    FIXTURE.write_text(page.text)
    print(f"wrote {FIXTURE} ({len(page.text)} chars)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
