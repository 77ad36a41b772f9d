"""Load probe: drive an OpenAI-compatible server and measure it the way vLLM's `bench serve` does,
with arrival fidelity, goodput at SLO, capacity search and statistical validity stated."""

from probes.load.capacity import CapacityError, CapacityPoint, CapacityResult, find_capacity, point_runner
from probes.load.metrics import LoadMetrics, P99Check, compute_metrics, pool_metrics
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord, load_records, records_jsonl
from probes.load.runner import Arrivals, LoadProbeError, PointResult, pool_points, run_point
from probes.load.stats import (
    QuantileCI,
    SampleSufficiency,
    StatsError,
    min_samples,
    proportion_ci,
    quantile_ci,
    sample_sufficiency,
)
from probes.load.workloads.workload import (
    Prompts,
    Workload,
    WorkloadConfig,
    WorkloadError,
    build_workload,
    synthetic_prompts,
)

__all__ = [
    "SLO",
    "Arrivals",
    "CapacityError",
    "CapacityPoint",
    "CapacityResult",
    "LoadMetrics",
    "LoadPoint",
    "LoadProbeError",
    "P99Check",
    "PointResult",
    "Prompts",
    "QuantileCI",
    "RequestRecord",
    "SampleSufficiency",
    "StatsError",
    "Workload",
    "WorkloadConfig",
    "WorkloadError",
    "build_workload",
    "compute_metrics",
    "find_capacity",
    "load_records",
    "min_samples",
    "point_runner",
    "pool_metrics",
    "pool_points",
    "proportion_ci",
    "quantile_ci",
    "records_jsonl",
    "run_point",
    "sample_sufficiency",
    "synthetic_prompts",
]
