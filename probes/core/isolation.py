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
