"""The runs behind a figure's rebuild interval: a capacity search's repeated run and its repeats
(`load.capacity.repeats`, schema >= 1.7.0), read from the sheet as page 1, validate and diff need them."""

from __future__ import annotations

from dataclasses import dataclass

from factsheet.document.schema import CapacitySection
from probes.core.measurement import NotMeasured
from probes.hostload import HostLoad
from probes.load.metrics import LoadMetrics
from probes.targets.isolation import CACHE_RESET, FRESH_START, Isolation


@dataclass(frozen=True)
class RepeatedRun:
    """One of the k runs: where it is stated, its figures, whether it passed the pass rule, whether the host
    was busy over it, and the host's load over it (None: not measured)."""

    pointer: str
    metrics: LoadMetrics
    passed: bool
    busy: bool
    load: HostLoad | None = None


@dataclass(frozen=True)
class Repeated:
    """The k runs of a headline run, the search's own first, and how they were kept apart."""

    index: int  # the repeated run's place in result.points
    runs: list[RepeatedRun]
    isolation: str


def repeated(cap: CapacitySection | NotMeasured, base: str) -> Repeated | None:
    """The repeats of a capacity search (`base`: its JSON pointer); None when it asked none, or made no
    confirmation run to repeat."""
    if isinstance(cap, NotMeasured) or cap.repeats is None or cap.repeats.of is None:
        return None
    i = cap.repeats.of
    p = cap.result.points[i]
    load = host_load_at(cap, i)
    runs = [RepeatedRun(f"{base}/result/points/{i}", p.metrics, p.passed, _busy(load), load)]
    runs += [
        RepeatedRun(f"{base}/repeats/runs/{j}/point", r.point.metrics, r.point.passed, _busy(r.host_load),
                    _measured(r.host_load))
        for j, r in enumerate(cap.repeats.runs)
    ]  # fmt: skip
    return Repeated(i, runs, isolation_words([r.isolation for r in cap.repeats.runs]))


def _busy(load) -> bool:
    return isinstance(load, HostLoad) and load.busy


def _measured(load) -> HostLoad | None:
    return load if isinstance(load, HostLoad) else None


def host_load_at(cap: CapacitySection, i: int) -> HostLoad | None:
    """The host load a search states for its run `i` (None: none stated, or not measured)."""
    return _measured(cap.host_load[i] if i < len(cap.host_load) else None)


def isolation_words(done: list[Isolation]) -> str:
    """How the repeats were kept apart, in words: every one the same way, or each kind counted."""
    fresh = sum(1 for x in done if x.method == FRESH_START and x.done)
    reset = sum(1 for x in done if x.method == CACHE_RESET and x.done)
    failed = [x for x in done if not x.done]
    n = len(done)
    if fresh == n:
        return "each repeat after a fresh start of the server the tool started"
    if reset == n:
        return "each repeat after a prefix-cache reset (POST /reset_prefix_cache answered 2xx)"
    words = []
    if fresh or reset:
        words.append(f"{fresh + reset} of {n} repeats after a fresh start or a prefix-cache reset")
    if failed:
        words.append(
            f"{len(failed)} of {n} after a prefix-cache reset that was not done ({failed[0].detail}): those "
            "share the server's cache with the runs before them (their prompts differ by seed)"
        )
    return "; ".join(words)
