"""The headline section of a factsheet (schema >= 1.6.0): each page-1 figure as data.

Kept free of `factsheet.document.schema` imports: the schema holds this model, and the figures are computed from the
schema's sheet in `factsheet.document.headline.figures`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from probes.core.measurement import Bounded, Model, shown

Verdict = Literal[
    "sufficient", "conclusive_fail", "insufficient", "lower_bound", "not_confirmed", "not_measured"
]

# Each verdict in words, wherever an outlet states one beside its figure.
VERDICT_WORDS: dict[str, str] = {
    "sufficient": "sufficient samples",
    "conclusive_fail": "conclusive fail",
    "insufficient": "insufficient samples",
    "lower_bound": "lower bound",
    "not_confirmed": "not confirmed",
    "not_measured": "not measured",
}

METHOD = (
    "each figure recomputed from the rest of the factsheet by factsheet/headline (the rule each figure names "
    "chose its run); `factsheet validate` recomputes it and names any figure that differs"
)


class Interval(Bounded, Model):
    """A figure's interval: a 95 % confidence interval, or for a capacity the range its probes establish."""

    lower: float | None = Field(description="None: no lower end at this n")
    upper: float | None = Field(description="None: no upper end (at this n, or the search's bracket is open)")
    method: str


class Rebuild(Model):
    """A figure over the k repeats of its run (schema >= 1.7.0): each repeat's value, their spread, and the
    rebuild interval, a prediction interval for the next build's value."""

    of: str = Field(description="what the values are: the figure itself, or (capacity) its run's p99 metric")
    k: int = Field(description="repeats the values come from (the run itself and its further runs)")
    values: list[float | None] = Field(description="each repeat's value, the headline run's first")
    sources: list[str] = Field(description="JSON pointer of each repeat's run, in the order of `values`")
    mean: float | None = Field(description="None: fewer than 3 repeats have a value")
    sd: float | None = Field(description="sample standard deviation (k − 1 in the denominator)")
    interval: Interval | None = Field(description="the rebuild interval; None: fewer than 3 values")
    isolation: str = Field(description="how the repeats were separated from each other, in words")
    passed: int | None = Field(
        None, description="capacity: repeats whose run passed the capacity's pass rule (of k)"
    )
    busy: int = Field(0, description="repeats measured on a busy host (probes/hostload)")


class Figure(Model):
    """One page-1 figure."""

    id: str = Field(
        description="capacity_at_slo[.<profile>], e2el_ms.p99, ttft_ms.p99, tpot_ms.p99, goodput, "
        "slo_attainment, pass_at_1, energy_wh_per_1000_requests"
    )
    label: str = Field(description="the figure's name on page 1")
    value: float | None = Field(
        description="None: not measured, or no value meets the SLO (see verdict, note)"
    )
    unit: str
    lower_bound: bool = Field(
        False,
        description="the value is a lower bound (≥ value): every probe up to the search's maximum passed",
    )
    interval: Interval | None = Field(description="None: the factsheet states none for this figure")
    n: int | None = Field(description="samples the figure rests on (requests, or tasks for pass@1)")
    verdict: Verdict = Field(
        description="what the samples support: sufficient, conclusive_fail (its interval lies wholly above "
        "the threshold), insufficient, lower_bound, not_confirmed (the long confirmation run failed), "
        "not_measured"
    )
    threshold_ms: float | None = Field(None, description="the SLO threshold a p99 figure is judged against")
    source: str = Field(description="JSON pointer (RFC 6901) of the run or section the figure comes from")
    run: str | None = Field(None, description="that run in words (knob, value, kind, requests)")
    rule: str = Field(description="the rule that chose this figure's run")
    note: str = Field("", description="what was established, or why the figure is not measured")
    profile: str | None = Field(None, description="capacity: the workload profile it was measured with")
    slo_attainment: float | None = Field(
        None,
        description="capacity: the SLO attainment (fraction of requests meeting every threshold) of its run",
    )
    rests_on: list[str] = Field(
        default_factory=list,
        description="capacity: the thresholds its pass rule checks (the p99 metric's, min_attainment when set)",
    )
    rebuild: Rebuild | None = Field(
        None,
        description="the figure over the repeats of its run, with the rebuild interval (schema >= 1.7.0; "
        "None: the spec asked no repeats, or the figure's run was not repeated)",
    )

    def words(self) -> str:
        """The figure as page 1 states it, in one line: value (≥ for a lower bound), interval, verdict, and how
        many of its repeats held (a capacity with repeats): '18 concurrent users, range [—, 20), insufficient
        samples, held in 2 of 3 runs'."""
        if self.value is None:
            return f"no value ({VERDICT_WORDS[self.verdict]})"
        value = ("≥ " if self.lower_bound else "") + f"{self.value:g} {self.unit}".rstrip()
        words = [value]
        if self.interval is not None:
            low, high = (_g(x) for x in (self.interval.lower, self.interval.upper))
            name = "range" if self.id.startswith("capacity_at_slo") else "95 % CI"
            words.append(f"{name} [{low}, {high}{')' if name == 'range' else ']'}")
        words.append(VERDICT_WORDS[self.verdict])
        if self.rebuild is not None and self.rebuild.passed is not None:
            words.append(f"held in {self.rebuild.passed} of {self.rebuild.k} runs")
        return ", ".join(words)


def _g(x: float | None) -> str:
    return shown(x)


class Headline(Model):
    """Page 1's figures, in page order (schema >= 1.6.0)."""

    method: str = METHOD
    figures: list[Figure]
    void: str | None = Field(
        None,
        description="why the build's measurement is void, in one line for page 1 (schema >= 1.10.0): the "
        "target lost mid-run, or no request of its load points completed; the build exits 1. None: not void",
    )

    def figure(self, id: str) -> Figure | None:
        return next((f for f in self.figures if f.id == id), None)

    def capacities(self) -> list[Figure]:
        return [f for f in self.figures if f.id.split(".")[0] == "capacity_at_slo"]
