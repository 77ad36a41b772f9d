"""Which run page 1 states: the one place this choice is made (page 1, validate, export and publish all read
it through the headline)."""

from __future__ import annotations

from dataclasses import dataclass

from factsheet.schema import CapacitySection, LoadSection, headline_index
from probes.core.measurement import NotMeasured
from probes.load.metrics import LoadMetrics

RULE_ANSWER = "the run at the capacity: its long confirmation where it passed, else its search probe"
RULE_FAILED_CONFIRMATION = "no probed value meets the SLO: the last long confirmation run, which shows it"
RULE_HEADLINE_POINT = "no capacity run: the headline load point (most requests completed in a steady window)"


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


def capacity_run(cap: CapacitySection | NotMeasured, base: str) -> Run | None:
    """The run that stands beside a capacity (`base`: the section's JSON pointer): the answer's last passing
    run (its confirmation when it passed); with no answer, the last confirmation, which showed that none
    meets the SLO; None when neither exists."""
    if isinstance(cap, NotMeasured):
        return None
    answer = cap.answer_point()
    points = cap.result.points
    if answer is not None:
        i = next(i for i, p in enumerate(points) if p is answer)
        return _capacity_point(cap, i, base, RULE_ANSWER)
    if cap.result.capacity is None:
        confirmations = [i for i, p in enumerate(points) if p.confirmation]
        if confirmations:
            return _capacity_point(cap, confirmations[-1], base, RULE_FAILED_CONFIRMATION)
    return None


def informative_run(load: LoadSection | NotMeasured) -> Run | None:
    """The most informative run: the capacity's (`capacity_run`) when there is one, else the headline load
    point (most requests completed). None when nothing was run."""
    if isinstance(load, NotMeasured):
        return None
    run = capacity_run(load.capacity, "/load/capacity")
    if run is not None:
        return run
    i = headline_index(load.points)
    if i is None:
        return None
    res = load.points[i].result
    where = f"{res.label} (headline load point: most requests completed)"
    return Run(res.metrics, where, False, f"/load/points/{i}/result", RULE_HEADLINE_POINT)
