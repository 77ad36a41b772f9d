"""A small build spec against an OpenAI-compatible endpoint (the mock server), shared by the test folders."""

from __future__ import annotations

import textwrap
from pathlib import Path


def endpoint_spec(
    folder: Path, base_url: str, extra: str = "", points: tuple[tuple[int, int], ...] = ((1, 4), (4, 12))
) -> Path:
    """Writes `model.yaml` into `folder`: closed-loop `points` as (concurrency, num_requests), then `extra`."""
    rows = "".join(f"    - {{concurrency: {c}, num_requests: {n}}}\n" for c, n in points)
    spec = folder / "model.yaml"
    spec.write_text(
        textwrap.dedent(f"""\
        spec_version: 1
        name: mock-endpoint
        model: {{name: mock-model}}
        target: {{kind: endpoint, base_url: "{base_url}", model: mock-model}}
        load:
          input_len: 16
          output_len: 8
          slo: {{ttft_ms: 80, tpot_ms: 10}}
          points:
        """)
        + rows
        + extra
    )
    return spec


# A policy on the headline point's p99 E2EL, either side of the mock's timing (its E2EL is at least
# 20 + 7 x 5 = 55 ms on any host): format with `name` and `threshold` (ms). Shared by the gate tests.
P99_POLICY = """\
policy_version: 1
id: p99-{name}
title: p99 E2EL within {threshold} ms
version: "1"
rules:
  - id: p99-e2el
    title: p99 E2EL within {threshold} ms
    field: load.points[headline].result.metrics.e2el_ms.percentiles.p99
    op: "<="
    threshold: {threshold}
    unit: ms
    evidence: {{measured: true, raw_records: true}}
  - id: records
    title: raw records verify
    check: raw_records
"""
