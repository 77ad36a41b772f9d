"""Logical knobs of a serving deployment and how they map onto a target's flags.

A knob is logical (what it means for the serving queue); an adapter turns it into the flags of
one target. Knobs that change the server's launch flags need a restart, which the tuner charges.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import Field

from probes.core.measurement import Count, Model


@dataclass(frozen=True)
class KnobInfo:
    name: str
    restart: bool
    meaning: str


KNOBS: dict[str, KnobInfo] = {
    "concurrency": KnobInfo(
        "concurrency",
        restart=False,
        meaning="client-side limit on requests in flight (closed loop: number of clients; "
        "open loop: max concurrency of the arrival stream); changed online",
    ),
    "max_num_seqs": KnobInfo(
        "max_num_seqs",
        restart=True,
        meaning="server batch limit: most sequences decoded together per step (vLLM --max-num-seqs)",
    ),
    "spec_k": KnobInfo(
        "spec_k",
        restart=True,
        meaning="speculative decoding width: 0 = off, k = n-gram speculation proposing k tokens per step",
    ),
}


class OperatingPoint(Model):
    """One value per logical knob: a configuration the tuner can evaluate."""

    concurrency: Count = Field(ge=1, description="requests in flight allowed by the client")
    max_num_seqs: Count = Field(ge=1, description="server batch limit (vLLM --max-num-seqs)")
    spec_k: Count = Field(ge=0, description="n-gram speculative tokens per step; 0 = speculation off")

    def key(self) -> tuple[int, int, int]:
        return (self.concurrency, self.max_num_seqs, self.spec_k)

    def label(self) -> str:
        spec = "off" if self.spec_k == 0 else f"ngram k={self.spec_k}"
        return f"concurrency={self.concurrency}, max_num_seqs={self.max_num_seqs}, speculation={spec}"

    def with_knob(self, knob: str, value: int) -> OperatingPoint:
        return self.model_copy(update={knob: value})

    def server_key(self) -> tuple[int, int]:
        """The part of the point that is fixed at server launch (changing it means a restart)."""
        return tuple(getattr(self, k) for k, info in KNOBS.items() if info.restart)  # type: ignore[return-value]


def needs_restart(current: OperatingPoint | None, new: OperatingPoint) -> bool:
    return current is None or current.server_key() != new.server_key()


def changed_knobs(a: OperatingPoint, b: OperatingPoint) -> list[str]:
    return [k for k in KNOBS if getattr(a, k) != getattr(b, k)]


# vLLM's n-gram proposer looks up the last 2..4 prompt tokens; these are vLLM's documented example
# values, kept fixed so that the only speculation knob is the width k.
NGRAM_PROMPT_LOOKUP_MAX = 4
NGRAM_PROMPT_LOOKUP_MIN = 2


def vllm_server_flags(point: OperatingPoint) -> list[str]:
    """Launch flags for vLLM's OpenAI server that realise the restart knobs of `point`."""
    flags = ["--max-num-seqs", str(point.max_num_seqs)]
    if point.spec_k > 0:
        spec = {
            "method": "ngram",
            "num_speculative_tokens": point.spec_k,
            "prompt_lookup_max": NGRAM_PROMPT_LOOKUP_MAX,
            "prompt_lookup_min": NGRAM_PROMPT_LOOKUP_MIN,
        }
        flags += ["--speculative-config", json.dumps(spec, separators=(",", ":"))]
    return flags
