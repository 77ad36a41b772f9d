"""Repeats of the headline runs and the seed of every run of a build (issue 28 item 4; schema >= 1.7.0).

A spec's `repeats: k` runs the capacity's headline run (its last long confirmation) k times in all: the
search's own run, then k − 1 more at the same value, each after a fresh server start (a server the tool
started; then a warm-up round at the run's load, probes/core/isolation.py WARM_UP_RULE) or a prefix-cache reset (an endpoint that offers one), each with its own seed. Their figures give the
between-run spread and the rebuild interval that page 1 states (`factsheet.document.headline.rebuild`).
"""

from __future__ import annotations

from pydantic import Field

from factsheet.document.records_file import RecordsFile
from probes.core.measurement import Model, NotMeasured
from probes.hostload import HostLoad
from probes.load.capacity import CapacityPoint
from probes.load.workloads.workload import SystemPrompt
from probes.targets.isolation import Isolation

# Runs per block of seeds: a search's probes, confirmations and repeats must number fewer (the spec checks).
SEED_BLOCK = 1000
SEED_RULE = (
    f"every run of a build draws its prompts (and arrivals) with a seed of its own: load.seed + {SEED_BLOCK} × "
    "block + position. Block 0: the sweep's load points (position: the point's place); block 1: the load "
    "section's capacity search; block 2 + k: compared workload k's search (position: the run's place in its "
    "search's probing order, its repeats following on). So no two runs of one build send the same prompts, "
    "and no run meets a prefix cache its own prompts warmed"
)


# The plan's calibration rounds (factsheet/document/plan.py; positions 0 to CALIBRATION_ROUNDS − 1) and the
# warm-up rounds after a fresh start (WARM_UP_RULE; CALIBRATION_ROUNDS + the repeat's position): a block no search reaches, so their prompts warm no prefix a
# measured run sends. Not in SEED_RULE's words: a document states that rule, and validate holds it.
CALIBRATION_BLOCK = SEED_BLOCK - 1


def run_seed(base: int, block: int, position: int) -> int:
    """The seed of one run of a build, by SEED_RULE (`base`: the spec's load.seed)."""
    return base + SEED_BLOCK * block + position


def search_block(compared: int | None) -> int:
    """The seed block of a capacity search: the load section's (None) or compared workload k's."""
    return 1 if compared is None else 2 + compared


class RepeatRun(Model):
    """One more run of the headline run: the same value, kind and size, its own seed, after an isolation."""

    point: CapacityPoint = Field(description="the run judged by the capacity's pass rule, as a probe is")
    seed: int = Field(description="the seed its prompts were drawn with (SEED_RULE)")
    isolation: Isolation = Field(description="what separated it from the run before it")
    records: RecordsFile
    server_records: RecordsFile | None = Field(None, description="its /metrics scrapes (None: none)")
    host_load: HostLoad | NotMeasured | None = Field(
        None, description="what else used the host over the run, and whether it was busy"
    )
    system_prompts: list[SystemPrompt] | None = Field(
        None, description="the system prompts it sent, by digest ([]: none; None: not recorded)"
    )


class Repeats(Model):
    """The headline run repeated: k runs in all (the search's own, `of`, and `runs`)."""

    k: int = Field(ge=3, description="runs asked for in all (the spec's repeats)")
    of: int | None = Field(
        description="index in result.points of the run repeated (the search's last confirmation); None: the "
        "search made no confirmation run, so there was nothing to repeat"
    )
    runs: list[RepeatRun] = Field(
        default_factory=list, description="the k − 1 further runs, in order (empty when `of` is None)"
    )
    answer_rule: str | None = Field(
        None,
        description="how the repeats decide the capacity (probes.load.capacity.REPEATS_RULE; schema >= 1.8.0: "
        "None before, when the search's own answer stood whatever the repeats showed)",
    )
