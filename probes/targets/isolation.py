"""What separates one repeat of a run from the last (factsheet `repeats`): a fresh start of a server the tool
started, or a prefix-cache reset where the target offers one (vLLM's `POST /reset_prefix_cache`), with
whether it worked. A repeat that shares the server's cache with the run before it is stated as such."""

from __future__ import annotations

import httpx

# The statement lives in probes/core (a capacity run states it, and load must not import targets).
from probes.core.isolation import CACHE_RESET, FRESH_START, RESET_PATH, Isolation  # noqa: F401

RESET_TIMEOUT_S = 30.0


def reset_prefix_cache(base_url: str, api_key: str | None, path: str = RESET_PATH) -> Isolation:
    """POST `path` (vLLM's /reset_prefix_cache unless an engine adapter names its own: SGLang's /flush_cache,
    a llama.cpp slot's erase) to an endpoint: done when it answers 2xx. Any other answer (404: the target
    offers none, or not in this mode) or no answer is stated, never raised: the repeat then runs on a server
    that may still hold its prompts' prefixes (their seeds differ, so its own prompts are not among them)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    shown = "" if path == RESET_PATH else f"POST {path}: "  # vLLM's words, as older builds stated them
    try:
        resp = httpx.post(base_url.rstrip("/") + path, headers=headers, timeout=RESET_TIMEOUT_S)
    except httpx.HTTPError as exc:
        return Isolation(method=CACHE_RESET, done=False, detail=f"{shown}no answer: {type(exc).__name__}")
    done = 200 <= resp.status_code < 300
    words = "the cache was reset" if done else "the target offers no reset here (the cache is not reset)"
    return Isolation(method=CACHE_RESET, done=done, detail=f"{shown}HTTP {resp.status_code}: {words}")
