"""How tests/server_view/fixtures/vllm-0.32-metrics.txt was captured (run once, by hand, holding the lock):

    flock /tmp/vllm.lock .venv/bin/python -m tests.server_view.capture_fixture

It starts the embedded target of models/smollm2-cpu.yaml, sends four completions that share a prefix (so the
prefix-cache counters and the latency histograms are non-zero), and saves the server's `/metrics` page as is.
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

from probes.targets import open_target
from tests.server_view.vllm_target import serving_target

FIXTURE = Path(__file__).parent / "fixtures" / "vllm-0.32-metrics.txt"


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
