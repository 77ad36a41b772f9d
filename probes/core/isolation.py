"""What separates one repeat of a run from the last, as a factsheet states it (probes/targets/isolation.py
does it: a fresh server start, or a prefix-cache reset)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from probes.core.measurement import Model

FRESH_START = "fresh server start"
CACHE_RESET = "prefix cache reset"
# vLLM serves the route only in its development mode (VLLM_SERVER_DEV_MODE=1); elsewhere it answers 404.
RESET_PATH = "/reset_prefix_cache"


class Isolation(Model):
    """How a repeat was separated from the run before it, and whether that worked."""

    method: Literal["fresh server start", "prefix cache reset"] = Field(
        description="fresh server start: the tool stopped and started the server it runs; prefix cache reset: "
        f"the engine's reset asked of the target (vLLM: POST {RESET_PATH}; SGLang: POST /flush_cache; llama.cpp "
        "server: POST /slots/<id>?action=erase for every slot), or what it offers none of"
    )
    done: bool = Field(description="the start answered /v1/models, or the reset answered 2xx")
    detail: str = Field(description="what the target answered, in words")


# A repeat after a restart met a cold server: in two demo builds every request over 3 s of a repeat after a fresh
# start sat in its first 100 of 460 (vLLM warming at the run's batch sizes), so the warm first run and the cold
# repeats disagreed and the step never held. A reset leaves the running server warm: no warm-up after one.
WARM_UP_RULE = (
    "after a fresh start, before the measured run: one round at the run's own load and shape (at concurrency c, "
    "c requests sent at once, or c chat sessions of turns_max turns each; at a rate r, ⌈r⌉ requests at that "
    "rate), its prompts of a seed no measured run "
    "draws, its answers not measured: the restarted server meets the run as warm as the step's first run met it "
    "(that one followed every run before it); after a prefix-cache reset the server is the one that ran them all, "
    "and no warm-up is sent"
)


def warmed(isolation: Isolation, requests: int, load: str, failed: int) -> Isolation:
    """A fresh start's statement with the warm-up round that followed it (WARM_UP_RULE); `load` in words."""
    lost = f" ({failed} failed)" if failed else ""
    words = f"; then {requests} warm-up requests at {load}, the run's shape, not measured{lost}"
    return isolation.model_copy(update={"detail": isolation.detail + words})
