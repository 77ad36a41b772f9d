"""Which runs of a factsheet were measured on a busy host (probes/hostload): for page 1, the load section and
`factsheet diff`, read the same way from the one place each run's host load is stated."""

from __future__ import annotations

from dataclasses import dataclass

from factsheet.document.schema import CapacitySection, LoadSection
from probes.core.measurement import NotMeasured
from probes.hostload import BUSY_RULE, HostLoad

__all__ = ["BUSY_RULE", "RunLoad", "busy", "busy_note", "run_loads", "search_loads"]


@dataclass(frozen=True)
class RunLoad:
    """One run (a load point, a capacity probe or confirmation) and the host's load over it."""

    run: str  # in words: "load point concurrency=4", "capacity (synthetic) confirmation: concurrency 8"
    path: str  # the field stating it
    load: HostLoad | NotMeasured | None  # None: not recorded (schema < 1.6.0)

    @property
    def measured(self) -> bool:
        return isinstance(self.load, HostLoad)

    @property
    def busy(self) -> bool:
        return isinstance(self.load, HostLoad) and self.load.busy


def search_loads(section: CapacitySection, scope: str, path: str) -> list[RunLoad]:
    """Each probed point's host load of one capacity search, in probing order."""
    r = section.result
    return [
        RunLoad(
            f"{scope} {'confirmation' if p.confirmation else 'probe'}: {r.knob} {p.value:g}",
            f"{path}.host_load[{i}]",
            section.host_load[i] if i < len(section.host_load) else None,
        )
        for i, p in enumerate(r.points)
    ]


def run_loads(load: LoadSection | NotMeasured) -> list[RunLoad]:
    """Every run of the load section: its points, then each capacity search's probes."""
    if not isinstance(load, LoadSection):
        return []
    out = [
        RunLoad(f"load point {e.result.label}", f"load.points[{i}].host_load", e.host_load)
        for i, e in enumerate(load.points)
    ]
    if not isinstance(load.capacity, NotMeasured):
        out += search_loads(load.capacity, f"capacity ({load.profile()})", "load.capacity")
    for k, c in enumerate(load.compared_workloads):
        out += search_loads(
            c.capacity, f"capacity ({c.workload.profile})", f"load.compared_workloads[{k}].capacity"
        )
    return out


def busy(loads: list[RunLoad]) -> list[RunLoad]:
    return [r for r in loads if r.busy]


def busy_note(which: str, loads: list[RunLoad]) -> str | None:
    """'<which>: k of n run(s) measured on a busy host (…)', or None when none was."""
    found = busy(loads)
    if not found:
        return None
    worst = max(found, key=lambda r: r.load.other + r.load.steal)
    return (
        f"{which}: {len(found)} of {len(loads)} run(s) measured on a busy host (most: {worst.run}, "
        f"{worst.load.summary()})"
    )
