"""The build's plan (schema >= 1.10.0): what it will run and how long each part should take on this target,
estimated before the first measured request from a calibration request (run two or three times, the
median taken), and what a time budget cut.

An estimate, labelled as one: attested (no record keeps the calibration), never a measured figure."""

from __future__ import annotations

from pydantic import Field

from probes.core.measurement import Model

# Each calibration round is run up to this many times, each with its own seed (the template's + r), and the one
# of median mean E2EL is taken: a busy host's stall of a second or so inflates one short round, not the median.
CALIBRATION_ROUNDS = 3

ESTIMATE_METHOD = (
    "one calibration request of the first load point's shape at concurrency 1, run twice (each its own seed), a "
    "third time where the two E2ELs differ by over 10 %, the run of median E2EL taken (of two: the lesser), "
    "gives the target's E2EL, TTFT and TPOT, and a run's start-up (its wall time less its E2EL); a closed-loop run of n requests at c users "
    "is estimated at start-up + ⌈n / c⌉ × E2EL, an open-loop one at start-up + n / rate + E2EL; where the build "
    "has a closed-loop capacity search, a second calibration round (its start × 8 users, at most its max_value, "
    "at least 4 a worker, one request each, sent at once; run as the request is, its median mean E2EL taken: a "
    "stall of a busy host inflates one short round, and a law through it every run) gives latency under "
    "load, and where its mean E2EL is over 1.1 × the "
    "first's, E2EL is taken to grow linearly in users through the two (its mean, and its p99 through the "
    "round's p99): the search's own rule (doubling to a clear fail, bisection to its resolution, at most "
    "max_points) is run on that law, judging the p99, for the probes it would make, each at start-up + "
    "⌈n / c⌉ × p99 E2EL(c) (a closed loop ends with its slowest user), and one confirmation step of k runs at the value it would "
    "confirm; where latency is not seen to grow (or the p99 is not on E2EL, or the knob is a rate), a search's "
    "max_points probes along its doubling path from the start, their requests' part × 1.4 (probes above "
    "capacity queue), and its confirmation step at the start value (at most, where latency does not grow); "
    "each further run of a step after a fresh server start costing the build's own start and its warm-up "
    "round (start-up + E2EL at the step's value); HumanEval+ at "
    "⌈tasks × samples / concurrency⌉ × (TTFT + max_tokens × TPOT) (at most: max_tokens is the cap); the tuner "
    "at its own time budget"
)
BUDGET_RULE = (
    "the budget covers the build from its start to the end of its measurements; the plan keeps every sweep "
    "point, a confirmation step of k runs per search and the accuracy run (a failed step's further steps are "
    "over the plan: the plan states each one's cost), and cuts a capacity search's probes (max_points) to what "
    "the rest leaves of 90 % of the budget (10 % kept for the estimate's own error), the load section's search "
    "first served; as a search goes, it stops before a probe the budget no longer leaves (the time spent, the "
    "next probe's allowance and the plan's estimate of everything after; the allowance 1.5 × the longer of the "
    "longest probe so far and the least work bound from a probe made: its time × the ratio of rounds ⌈n / c⌉ "
    "× c'/c where the next has more users, or × r/r' where the next rate is lower), stating the probes it made as its "
    "max_points; a search so cut bisects its bracket (the widest interval left) with the points it has, and "
    "states the resolution it reached"
)


class Calibration(Model):
    """The calibration request the plan's estimates rest on."""

    e2el_ms: float = Field(description="its end-to-end latency (ms)")
    ttft_ms: float | None = Field(description="its time to first token (ms)")
    tpot_ms: float | None = Field(
        description="its time per output token after the first (ms; None: one token)"
    )
    startup_ms: float = Field(
        description="the run's wall time less its E2EL: a run's start-up on this host (ms)"
    )
    rounds_ms: list[float] = Field(
        default_factory=list,
        description="the E2EL of every run of the request, in the order run: the one of median E2EL is stated "
        "above (ms; []: one run, as plans before this field)",
    )


class LoadRound(Model):
    """The calibration's second round: requests sent at once, one a user, for latency under load."""

    users: int = Field(description="requests sent at once, one a user")
    e2el_ms: float = Field(description="their mean end-to-end latency (ms)")
    rounds_ms: list[float] = Field(
        default_factory=list,
        description="every round's mean E2EL, in the order run: the median one is stated above (ms; []: one "
        "round, as plans before this field)",
    )
    p99_ms: float | None = Field(
        None, description="that round's p99 E2EL (ms; None: not stated, as plans before this field)"
    )


class PlanItem(Model):
    """One part of the build: how many runs, the estimate of each and of all."""

    what: str = Field(description="the part (a sweep point, a capacity search's probes, confirmations, ...)")
    runs: int = Field(description="runs planned (at most: a search may narrow its bracket sooner)")
    each_s: float = Field(description="estimate of one run (s)")
    total_s: float = Field(description="estimate of all its runs (s)")


class BuildPlan(Model):
    """What the build planned before its first measured request, with its estimate, and what it took."""

    budget_s: float | None = Field(description="the time budget (s; load.budget_s or --budget); None: none")
    budget_from: str | None = Field(None, description="where the budget was given: the spec, or --budget")
    calibration: Calibration
    load_round: LoadRound | None = Field(
        None,
        description="the calibration's second round (the server answered these too); None: none completed",
    )
    method: str = ESTIMATE_METHOD
    budget_rule: str = BUDGET_RULE
    elapsed_before_s: float = Field(description="the build's time before the plan (target start, checks) (s)")
    items: list[PlanItem]
    estimate_s: float = Field(description="the estimate of everything planned, from the plan on (s)")
    cuts: list[str] = Field(default_factory=list, description="what the budget cut, in words")
    taken_s: float | None = Field(
        None, description="what the planned part took, its calibration included, measured by the build (s)"
    )
