"""Which run page 1 states: the one place this choice is made (page 1, validate, export and publish all read
it through the headline)."""

from __future__ import annotations

from dataclasses import dataclass

from factsheet.document.schema import CapacitySection, LoadSection, headline_index
from probes.core.measurement import NotMeasured
from probes.load.metrics import LoadMetrics

RULE_CONFIRMED = "the capacity's long confirmation run (the last one, on which the search settled)"
RULE_NOT_CONFIRMED = (
    "the capacity's last long confirmation run, which failed: the capacity is not confirmed (its figures are "
    "stated as that run's, never as the capacity's)"
)
RULE_HEADLINE_POINT = (
    "no capacity confirmation run: the headline load point (most requests completed in a steady window)"
)
RULE_ANSWER = "the last passing run at the capacity (its confirmation when there is one)"


@dataclass(frozen=True)
class Run:
    """The run page 1 states: its figures, where it is (words and JSON pointer) and the rule that chose it."""

    metrics: LoadMetrics
    where: str
    confirmation: bool
    pointer: str
    rule: str


def _capacity_point(cap: CapacitySection, i: int, base: str, rule: str) -> Run:
    p, knob = cap.result.points[i], cap.result.knob
    value = f"{p.value:g} req/s" if knob == "rate" else f"{p.value:g}"
    kind = "capacity confirmation run" if p.confirmation else "capacity search probe"
    where = f"the {kind} at {knob} {value} ({p.metrics.measured} requests)"
    return Run(p.metrics, where, p.confirmation, f"{base}/result/points/{i}", rule)


def confirmation_run(cap: CapacitySection | NotMeasured, base: str) -> Run | None:
    """A capacity search's last confirmation run (`base`: the section's JSON pointer), the long run that
    measures the answer; None when it ran none."""
    if isinstance(cap, NotMeasured):
        return None
    confirmations = [i for i, p in enumerate(cap.result.points) if p.confirmation]
    if not confirmations:
        return None
    passed = cap.result.points[confirmations[-1]].passed
    return _capacity_point(cap, confirmations[-1], base, RULE_CONFIRMED if passed else RULE_NOT_CONFIRMED)


def answer_run(cap: CapacitySection | NotMeasured, base: str) -> Run | None:
    """The last passing run at the capacity (its confirmation when there is one): the run the capacity's own
    attainment and n are stated from; None without an answer."""
    if isinstance(cap, NotMeasured):
        return None
    answer = cap.answer_point()
    if answer is None:
        return None
    i = next(i for i, p in enumerate(cap.result.points) if p is answer)
    return _capacity_point(cap, i, base, RULE_ANSWER)


def informative_run(load: LoadSection | NotMeasured) -> Run | None:
    """The most informative run: the capacity search's last confirmation when there is one (the long run that
    measures the answer), else the headline load point (most requests completed). None when nothing ran."""
    if isinstance(load, NotMeasured):
        return None
    run = confirmation_run(load.capacity, "/load/capacity")
    if run is not None:
        return run
    i = headline_index(load.points)
    if i is None:
        return None
    res = load.points[i].result
    where = f"{res.label} (headline load point: most requests completed)"
    return Run(res.metrics, where, False, f"/load/points/{i}/result", RULE_HEADLINE_POINT)
