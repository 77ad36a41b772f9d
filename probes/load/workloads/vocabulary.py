"""Text of an exact token count: words the target's tokenizer encodes as one token each, with or without
a leading space. Byte-level BPE tokenizers (GPT-2, Llama 3, SmolLM2) split text at spaces before merging,
so n such words joined by spaces encode to exactly n tokens, and a prompt that starts with a prefix of P
words starts with that prefix's P tokens: lengths and shared prefixes hold token for token."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from probes.core.digests import sha256_bytes
from probes.load.workloads.workload import WORDS, WorkloadError, load_tokenizer


class Vocabulary:
    """Draws word text of a stated token count; `method` says how exact the count is."""

    def __init__(self, tokenizer_path: str | None):
        self.tokenizer = load_tokenizer(tokenizer_path)
        if self.tokenizer is None:
            self.words = list(WORDS)
            self.method = (
                "common English words, one counted as one token (no tokenizer given: the server's "
                "usage.prompt_tokens in the records gives the exact count)"
            )
            return
        self.words = [w for w in WORDS if self._one_token(w)]
        if len(self.words) < 16:
            raise WorkloadError(
                f"workload: the tokenizer {Path(tokenizer_path or '').name} splits common English words; "
                "exact token lengths need a tokenizer with whole-word tokens (or no tokenizer)"
            )
        digest = sha256_bytes(Path(tokenizer_path or "").read_bytes())
        self.method = (
            f"common English words that are one token each under the target's tokenizer "
            f"({Path(tokenizer_path or '').name}, {digest}): token counts exact"
        )

    def _one_token(self, word: str) -> bool:
        enc = self.tokenizer.encode
        return all(len(enc(t, add_special_tokens=False).ids) == 1 for t in (word, " " + word))

    def draw(self, rng: np.random.Generator, tokens: int) -> list[str]:
        """`tokens` words (each one token)."""
        return draw_words(self.words, rng, tokens)

    def count(self, text: str) -> int | None:
        """Tokens of `text` under the tokenizer (None without one)."""
        if self.tokenizer is None:
            return None
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)


def draw_words(words: list[str], rng: np.random.Generator, tokens: int) -> list[str]:
    """`tokens` of `words` (a Vocabulary's), as `Vocabulary.draw` draws them: a generator sent to a worker
    process carries the words, not the tokenizer."""
    return [words[i] for i in rng.integers(0, len(words), size=tokens)]


def join(*parts: list[str]) -> str:
    return " ".join(w for part in parts for w in part)
