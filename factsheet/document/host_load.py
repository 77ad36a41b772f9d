"""Which runs of a factsheet were measured on a busy host (probes/hostload): for page 1, the load section and
`factsheet diff`, read the same way from the one place each run's host load is stated. Only reads the
document (the measuring is probes.hostload's), so it sits here, below the build and the readers."""

from __future__ import annotations

from dataclasses import dataclass

from factsheet.document.schema import CapacitySection, LoadSection
from probes.core.measurement import NotMeasured
from probes.hostload import HostLoad

__all__ = ["POINTS_SCOPE", "RunLoad", "busy", "busy_note", "repeat_loads", "run_loads", "search_loads"]


POINTS_SCOPE = "load points"  # the scope of the sweep's runs; a search's is "capacity (<its profile>)"


@dataclass(frozen=True)
class RunLoad:
    """One run (a load point, a capacity probe or confirmation) and the host's load over it."""

    run: str  # in words: "load point concurrency=4", "capacity (synthetic) confirmation: concurrency 8"
    path: str  # the field stating it
    load: HostLoad | NotMeasured | None  # None: not recorded (schema < 1.6.0)
    scope: str = ""  # whose run: "load points", "capacity (synthetic)"
    name: str = ""  # the run within its scope: "concurrency=4", "confirmation: concurrency 8"

    @property
    def measured(self) -> bool:
        return isinstance(self.load, HostLoad)

    @property
    def busy(self) -> bool:
        return isinstance(self.load, HostLoad) and self.load.busy


def search_loads(section: CapacitySection, scope: str, path: str) -> list[RunLoad]:
    """Each probed point's host load of one capacity search, in probing order (its repeats: repeat_loads)."""
    r = section.result
    return [
        RunLoad(
            f"{scope} {name}",
            f"{path}.host_load[{i}]",
            section.host_load[i] if i < len(section.host_load) else None,
            scope,
            name,
        )
        for i, p in enumerate(r.points)
        for name in (f"{'confirmation' if p.confirmation else 'probe'}: {r.knob} {p.value:g}",)
    ]


def repeat_loads(section: CapacitySection, scope: str, path: str) -> list[RunLoad]:
    """The host load of each further run of a search's repeated run (schema >= 1.7.0), in order."""
    runs = section.repeats.runs if section.repeats is not None else []
    return [
        RunLoad(f"{scope} {name}", f"{path}.repeats.runs[{j}].host_load", run.host_load, scope, name)
        for j, run in enumerate(runs)
        for name in (f"repeat {j + 2}: {section.result.knob} {run.point.value:g}",)
    ]


def run_loads(load: LoadSection | NotMeasured) -> list[RunLoad]:
    """Every run of the load section: its points, then each capacity search's probes and repeats."""
    if not isinstance(load, LoadSection):
        return []
    out = [
        RunLoad(
            f"load point {e.result.label}",
            f"load.points[{i}].host_load",
            e.host_load,
            POINTS_SCOPE,
            e.result.label,
        )  # fmt: skip
        for i, e in enumerate(load.points)
    ]
    if not isinstance(load.capacity, NotMeasured):
        scope = f"capacity ({load.profile()})"
        out += search_loads(load.capacity, scope, "load.capacity")
        out += repeat_loads(load.capacity, scope, "load.capacity")
    for k, c in enumerate(load.compared_workloads):
        scope, path = f"capacity ({c.workload.profile})", f"load.compared_workloads[{k}].capacity"
        out += search_loads(c.capacity, scope, path) + repeat_loads(c.capacity, scope, path)
    return out


def busy(loads: list[RunLoad]) -> list[tuple[RunLoad, HostLoad]]:
    """The runs measured on a busy host, each with its (measured) load."""
    return [(r, r.load) for r in loads if r.busy and isinstance(r.load, HostLoad)]


def busy_note(which: str, loads: list[RunLoad]) -> str | None:
    """'<which>: k of n run(s) measured on a busy host (…)', or None when none was."""
    found = busy(loads)
    if not found:
        return None
    run, load = max(found, key=lambda found: found[1].other + found[1].steal)
    return f"{which}: {len(found)} of {len(loads)} run(s) measured on a busy host (most: {run.run}, {load.summary()})"
