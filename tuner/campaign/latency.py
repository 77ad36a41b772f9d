"""A campaign measurement's latency requests, measured and summarised the load probe's way.

Every measurer (the vLLM server's, transformers' in-process one) turns its latency requests into the load
probe's per-request records (`probes.load.records.RequestRecord`: send, first-token and end times, output
tokens); the figures come from those records only, through the load probe's metrics
(`probes.load.metrics.compute_metrics`: each request's latencies from `latencies_ms`, TPOT from the output
token count, percentiles by `probes.core.measurement.summarize`, 95 % order-statistic CIs from
`probes/load/stats.py`). So a chunk carrying several tokens (n-gram speculation) counts its tokens, and
`factsheet validate` re-derives every latency figure of a campaign from the records the measurement kept.

A measurer returns the evidence under `LATENCY` in its figures (`evidence`); the runner moves it out of the
table into the measurement's file and the store writes its records beside it, with their sha256
(`tuner.campaign.store`).
"""

from __future__ import annotations

from pydantic import Field

from probes.core.measurement import Model
from probes.load.metrics import LoadMetrics, compute_metrics
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord
from probes.load.workloads.workload import Workload

LATENCY = "latency"  # key of the evidence in a measurer's result and in a measurement's file

# figure name → (metric, statistic): the table's latency columns, in milliseconds
LATENCY_FIGURES = {
    "ttft_p50_ms": ("ttft_ms", "p50"),
    "ttft_p90_ms": ("ttft_ms", "p90"),
    "tpot_p50_ms": ("tpot_ms", "p50"),
    "e2el_p50_ms": ("e2el_ms", "p50"),
    "e2el_p90_ms": ("e2el_ms", "p90"),
    "e2el_max_ms": ("e2el_ms", "max"),
}


class LatencyEvidence(Model):
    """What a measurement's latency figures rest on (kept in the measurement's file; the store moves
    `records` into a records file and keeps its path and sha256 here instead)."""

    source: str = Field(description="what served the requests and how they were timed")
    point: LoadPoint | None = Field(None, description="the load point, when the load probe sent the requests")
    workload: Workload | None = Field(None, description="the load probe's workload the prompts came from")
    metrics: LoadMetrics = Field(description="the load probe's metrics of the records: percentiles and CIs")
    records: list[RequestRecord] = Field(default_factory=list, description="per request, in send order")


def latency_metrics(records: list[RequestRecord]) -> LoadMetrics:
    """The load probe's metrics of a measurement's records (no SLO: a campaign judges no threshold)."""
    return compute_metrics(records, SLO())


def latency_figures(metrics: LoadMetrics) -> dict[str, float | None]:
    """The table's latency figures (ms), the completed requests and their mean output tokens."""
    out: dict[str, float | None] = {}
    for name, (metric, stat) in LATENCY_FIGURES.items():
        dist = getattr(metrics, metric)
        out[name] = dist.max if stat == "max" else dist.percentiles.get(stat)
    out["n_requests"] = metrics.completed
    out["tokens_mean"] = metrics.total_output_tokens / metrics.completed if metrics.completed else None
    return out


def measured(
    records: list[RequestRecord],
    *,
    source: str,
    point: LoadPoint | None = None,
    workload: Workload | None = None,
) -> dict:
    """A measurer's latency result: the figures, and the evidence under `LATENCY` (records, metrics with
    their CIs, the load point and workload when the requests went through the load probe)."""
    metrics = latency_metrics(records)
    evidence = LatencyEvidence(
        source=source, point=point, workload=workload, metrics=metrics, records=records
    )
    return {**latency_figures(metrics), LATENCY: evidence.model_dump(mode="json")}
