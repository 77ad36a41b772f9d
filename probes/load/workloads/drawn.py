"""A point's prompts made when each is asked for (when its request is due), never held whole: memory is
that of what they are made from, not of the run's length (issue 31 item 1).

`DrawnPrompts`: prompts drawn one after another from one random stream (synthetic, long-context,
shared-prefix). The stream's state is kept every CHECKPOINT prompts, so prompt i is redrawn from the
checkpoint before it, and the next prompt in order from where the last one ended. `CycledPrompts`: a fixed
set of texts (a prompt file's rows) repeated, optionally in a given order, to the point's count. Either
gives the text a list built the old way gives, byte for byte, and `digest` is that of json.dumps of that
whole list (`streamed_digest`), so the digests factsheets already carry stay the same.

Measured (synthetic, 200,000 prompts of 64 tokens, seed 0; tracemalloc peak of building the plan, and
its build time, 2-core host): the list built up front peaked at 180.2 MiB in 1.75 s; drawn when due, 0.4 MiB
in 1.76 s (every prompt is drawn once for the digest, and again when sent)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from probes.core.digests import prefixed

CHECKPOINT = 256  # prompts between two kept states (a state is ~0.3 kB; redrawing to i costs < this many)

# (stream, request index) → the request's prompt, drawing from the stream what it needs
Draw = Callable[[np.random.Generator, int], str]
# (stream, request index) → None, drawing from the stream exactly what Draw draws for that request
Skip = Callable[[np.random.Generator, int], None]


def streamed_digest(prompts: Iterable[str]) -> str:
    """digest_json(list(prompts)), one prompt at a time: json.dumps spells a list of strings as its items'
    spellings joined by ", " in brackets, so the digest is the one a materialised list gives."""
    h = hashlib.sha256(b"[")
    for i, p in enumerate(prompts):
        h.update((", " if i else "").encode() + json.dumps(p).encode())
    h.update(b"]")
    return prefixed(h.hexdigest())


class LazyPrompts(Sequence[str]):
    """`count` prompts, prompt i made by `_prompt(i)` when asked for; `digest` covers all of them in order."""

    count: int
    digest: str

    def _prompt(self, i: int) -> str:
        raise NotImplementedError

    def __len__(self) -> int:
        return self.count

    # Equal to other lazy prompts with the same prompts (the digest covers every one, in order), and to a
    # list holding them: build_plan's result is compared, and a Sequence has no equality of its own.
    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyPrompts):
            return self.count == other.count and self.digest == other.digest
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == self.count and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable read position; equality by content

    def __getitem__(self, i):  # an int: one prompt (Sequence's iteration and slicing build on it)
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self.count))]
        if i < 0:
            i += self.count
        if not 0 <= i < self.count:
            raise IndexError(i)
        return self._prompt(i)


class DrawnPrompts(LazyPrompts):
    """`count` prompts drawn by `draw` from `rng` in index order. Building it draws every prompt once
    (for `digest`) and leaves `rng` after the last, as a list would. `skip`, when given, moves the stream
    past a prompt without making its text: the prompts between a checkpoint and the one asked for (a worker
    process sends every W-th request, so it passes over the others) cost their random draws only, not their
    words or their trimming by a tokenizer."""

    def __init__(self, rng: np.random.Generator, count: int, draw: Draw, skip: Skip | None = None):
        self.draw, self.skip, self.count = draw, skip, count
        self.states: list[dict] = []
        self.digest = streamed_digest(self._first_draw(rng))
        self._rng: np.random.Generator | None = None
        self._next = -1  # the index the kept stream would draw next

    def _first_draw(self, rng: np.random.Generator) -> Iterator[str]:
        for i in range(self.count):
            if i % CHECKPOINT == 0:
                self.states.append(rng.bit_generator.state)
            yield self.draw(rng, i)

    def __getstate__(self) -> dict:  # a worker process is sent the states, not the stream in use
        return {**self.__dict__, "_rng": None, "_next": -1}

    def _prompt(self, i: int) -> str:
        if self._rng is None or not self._next <= i < self._next + CHECKPOINT:
            self._rng = np.random.default_rng()
            self._rng.bit_generator.state = self.states[i // CHECKPOINT]
            self._next = i - i % CHECKPOINT
        past = self.skip or self.draw
        while self._next < i:  # the prompts between, drawn and let go
            past(self._rng, self._next)
            self._next += 1
        self._next += 1
        return self.draw(self._rng, i)


class CycledPrompts(LazyPrompts):
    """`count` prompts cycling through `texts` (in `order`, indexes into `texts`, when given): prompt i is
    texts[order[i % n]]. What is held is `texts` (a prompt file's rows, read from the file when asked for)
    and the order, never the count's worth of prompts."""

    def __init__(self, texts: Sequence[str], count: int, order: Sequence[int] | None = None):
        self.texts, self.count, self.order = texts, count, order
        self.digest = streamed_digest(self)

    def _prompt(self, i: int) -> str:
        k = i % len(self.texts)
        return self.texts[int(self.order[k]) if self.order is not None else k]
