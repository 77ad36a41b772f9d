"""What every profile builder is given beside its own parameters: the point's seed and nominal lengths
and the target's tokenizer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from probes.load.workloads.workload import Workload


@dataclass(frozen=True)
class BuildContext:
    count: int  # requests the point sends at most
    seed: int
    input_len: int  # the load section's input_len (synthetic)
    output_len: int  # the load section's output_len (a profile's own output_len wins)
    tokenizer_path: str | None = None


def stamped(workload: Workload, profile, version: str) -> Workload:
    """`workload` with its profile, generator version and parameters as a factsheet records them: files by
    name (their sha256 is beside it), never the machine path they were read from."""
    path = getattr(profile, "path", None)
    recorded = profile.model_copy(update={"path": Path(path).name}) if path else profile
    return workload.model_copy(
        update={"profile": profile.profile, "generator_version": version, "parameters": recorded}
    )
