"""`probe load --workload NAME --workload-option KEY=VALUE`: the profile and what it fixes of the point,
kept out of the CLI module (it only passes the flags through)."""

from __future__ import annotations

from probes.load.workloads.profiles import TraceProfile, WorkloadProfile, nominal_lengths
from probes.load.workloads.registry import parse_profile
from probes.load.workloads.trace import trace_shape
from probes.load.workloads.workload import WorkloadError


def _options(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise WorkloadError(f"--workload-option: '{item}' is not KEY=VALUE")
        out[key.strip().replace("-", "_")] = value
    return out


def probe_workload(
    name: str | None,
    options: list[str],
    dataset_path: str | None,
    concurrency: int | None,
    rate: float | None,
    count: int,
) -> tuple[WorkloadProfile | None, float | None, int, tuple[int | None, int | None]]:
    """(profile, rate, request count, (input_len, output_len) it states) for `probe load`. No `--workload`:
    no profile, the flags unchanged (the `--dataset` path of earlier versions). A trace brings its rate."""
    if name is None:
        if options:
            raise WorkloadError("--workload-option: needs --workload")
        return None, rate, count, (None, None)
    values = _options(options)
    if dataset_path and "path" not in values:
        values["path"] = dataset_path
    profile = parse_profile(name, values)
    if isinstance(profile, TraceProfile):
        if concurrency is not None or rate is not None:
            raise WorkloadError(
                "--workload trace: give neither --concurrency nor --request-rate (the trace is the schedule)"
            )
        rate, count, input_len, output_len = trace_shape(profile, count)
        return profile, rate, count, (input_len, output_len)
    return profile, rate, count, nominal_lengths(profile)
