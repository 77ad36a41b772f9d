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
