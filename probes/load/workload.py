"""Prompts for a load point: synthetic text of a given token length, reproducible from a seed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from probes.measurement import Model

# Common one-token English words: without a tokenizer, one word ≈ one token (stated as the method).
_WORDS = (
    "the of and to in is was for on are with as by at be this from that have or one had not but what all "
    "were when we there can an your which their said if do will each about how up out them then she many "
    "some so these would other into has more her two like him see time could no make than first been its "
    "who now people my made over did down only way find use may water long little very after words called "
    "just where most know get through back much go good new write our me man too any day same right look"
).split()


class Workload(Model):
    prompts_digest: str = Field(description="sha256 of the JSON list of prompts sent")
    input_len: int
    length_method: str
    num_prompts: int


def _tokenizer(path: str | None):
    if not path or not Path(path).is_file():
        return None
    from tokenizers import Tokenizer

    return Tokenizer.from_file(path)


def _fit_to_tokens(words: list[str], target: int, tokenizer) -> str:
    """Trim or extend word list until the tokenizer counts exactly `target` tokens (or the closest below)."""
    text = " ".join(words[:target])
    n = len(words[:target])
    while n > 1 and len(tokenizer.encode(text, add_special_tokens=False).ids) > target:
        n -= 1
        text = " ".join(words[:n])
    return text


def synthetic_prompts(
    count: int, input_len: int, seed: int = 0, tokenizer_path: str | None = None
) -> tuple[list[str], Workload]:
    rng = np.random.default_rng(seed)
    tok = _tokenizer(tokenizer_path)
    prompts = []
    for _ in range(count):
        words = [_WORDS[i] for i in rng.integers(0, len(_WORDS), size=input_len)]
        prompts.append(_fit_to_tokens(words, input_len, tok) if tok else " ".join(words))
    method: Literal["tokenizer", "words"] = "tokenizer" if tok else "words"
    desc = (
        f"random common words trimmed to {input_len} tokens by the target's tokenizer ({tokenizer_path})"
        if method == "tokenizer"
        else f"{input_len} random common English words (≈1 token each; the server's usage.prompt_tokens "
        "in the raw records gives the exact count)"
    )
    digest = "sha256:" + hashlib.sha256(json.dumps(prompts).encode()).hexdigest()
    return prompts, Workload(
        prompts_digest=digest, input_len=input_len, length_method=desc, num_prompts=count
    )
