"""A small build spec against an OpenAI-compatible endpoint (the mock server), shared by the test folders."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.support.spec_builder import DELETE, merged, spec_yaml

POINTS = ((1, 4), (4, 12))
# The base spec's SLO: one home for the tests that swap it for a p99 E2EL threshold.
SLO = {"ttft_ms": 80, "tpot_ms": 10}


def e2el_slo(threshold_ms: float) -> dict:
    """The `load.slo` override that swaps the base SLO for a p99 E2EL threshold alone (what capacity needs)."""
    return {"e2el_ms": threshold_ms, "ttft_ms": DELETE, "tpot_ms": DELETE}


def endpoint_spec_dict(
    base_url: str, points: tuple[tuple[int, int], ...] = POINTS, overrides: Mapping | None = None
) -> dict:
    """The small endpoint spec as a dict: closed-loop `points` as (concurrency, num_requests), then
    `overrides` deep-merged into it (see `spec_builder.merged`)."""
    spec = {
        "spec_version": 1,
        "name": "mock-endpoint",
        "model": {"name": "mock-model"},
        "target": {"kind": "endpoint", "base_url": base_url, "model": "mock-model"},
        "load": {
            "input_len": 16,
            "output_len": 8,
            "slo": dict(SLO),
            "points": [{"concurrency": c, "num_requests": n} for c, n in points],
        },
    }
    return merged(spec, overrides)


def endpoint_spec(
    folder: Path,
    base_url: str,
    extra: str = "",
    points: tuple[tuple[int, int], ...] = POINTS,
    overrides: Mapping | None = None,
) -> Path:
    """Writes `model.yaml` into `folder`: the spec of `endpoint_spec_dict`, then `extra`, YAML text that
    continues the `load` mapping (two-space indent) or adds top-level keys (none)."""
    spec = folder / "model.yaml"
    spec.write_text(spec_yaml(endpoint_spec_dict(base_url, points, overrides)) + extra)
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
