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
from typing import Generic, TypeVar

import numpy as np

from probes.core.digests import prefixed

T = TypeVar("T")
CHECKPOINT = 256  # prompts between two kept states (a state is ~0.3 kB; redrawing to i costs < this many)

# (stream, request index) → the request's prompt, drawing from the stream what it needs
Draw = Callable[[np.random.Generator, int], str]
# (stream, request index) → None, drawing from the stream exactly what Draw draws for that request
Skip = Callable[[np.random.Generator, int], None]


def streamed_digest(items: Iterable[object]) -> str:
    """digest_json(list(items)), one item at a time: json.dumps spells a list as its items' spellings
    (each as json.dumps spells it alone, with the same separators) joined by ", " in brackets, so the
    digest is the one a materialised list gives (of prompts; of a chat-sessions script's sessions)."""
    h = hashlib.sha256(b"[")
    for i, p in enumerate(items):
        h.update((", " if i else "").encode() + json.dumps(p).encode())
    h.update(b"]")
    return prefixed(h.hexdigest())


class Lazy(Sequence[T]):
    """`count` items, item i made by `_item(i)` when asked for: prompts, chat sessions' scripts."""

    count: int

    def _item(self, i: int) -> T:
        raise NotImplementedError

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i):  # an int: one item (Sequence's iteration and slicing build on it)
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self.count))]
        if i < 0:
            i += self.count
        if not 0 <= i < self.count:
            raise IndexError(i)
        return self._item(i)


class LazyPrompts(Lazy[str]):
    """`count` prompts, prompt i made by `_prompt(i)` when asked for; `digest` covers all of them in order."""

    digest: str

    def _prompt(self, i: int) -> str:
        raise NotImplementedError

    def _item(self, i: int) -> str:
        return self._prompt(i)

    # Equal to other lazy prompts with the same prompts (the digest covers every one, in order), and to a
    # list holding them: build_plan's result is compared, and a Sequence has no equality of its own.
    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyPrompts):
            return self.count == other.count and self.digest == other.digest
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == self.count and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable read position; equality by content


class Checkpointed(Generic[T]):
    """Items drawn one after another from one random stream, each from where the one before left the
    stream and a cursor it moved on (a prompt: its index; a chat session: its first request's index). The
    stream's state and the cursor are kept every CHECKPOINT items (`states`), so item k is redrawn from the
    checkpoint before it, the items between passed over by `_step(make=False)`, which costs their random
    draws only; the next item in order is drawn from where the last one ended."""

    states: list[tuple[dict, int]]
    _rng: np.random.Generator | None = None
    _next = -1  # the item the kept stream would draw next
    _cursor = 0  # the cursor before that item

    def _step(self, rng: np.random.Generator, k: int, cursor: int, make: bool) -> tuple[T | None, int]:
        """Item k drawn from `rng` (or, make=False, only the stream moved past it) and the cursor after it."""
        raise NotImplementedError

    def _first_draw(
        self, rng: np.random.Generator, cursor: int, more: Callable[[int, int], bool]
    ) -> Iterator[T]:
        """Every item, in order, while `more(k, cursor)`; the checkpoints are kept on the way."""
        self.states, k = [], 0
        while more(k, cursor):
            if k % CHECKPOINT == 0:
                self.states.append((rng.bit_generator.state, cursor))
            item, cursor = self._step(rng, k, cursor, True)
            k += 1
            yield item  # type: ignore[misc]  # make=True: an item

    def __getstate__(self) -> dict:  # a worker process is sent the states, not the stream in use
        return {**self.__dict__, "_rng": None, "_next": -1, "_cursor": 0}

    def _redraw(self, k: int) -> T:
        if self._rng is None or not self._next <= k < self._next + CHECKPOINT:
            state, self._cursor = self.states[k // CHECKPOINT]
            self._rng = np.random.default_rng()
            self._rng.bit_generator.state = state
            self._next = k - k % CHECKPOINT
        while self._next < k:  # the items between, passed over
            _, self._cursor = self._step(self._rng, self._next, self._cursor, False)
            self._next += 1
        item, self._cursor = self._step(self._rng, k, self._cursor, True)
        self._next += 1
        return item  # type: ignore[return-value]  # make=True: an item


class DrawnPrompts(LazyPrompts, Checkpointed[str]):
    """`count` prompts drawn by `draw` from `rng` in index order. Building it draws every prompt once
    (for `digest`) and leaves `rng` after the last, as a list would. `skip`, when given, moves the stream
    past a prompt without making its text: the prompts between a checkpoint and the one asked for (a worker
    process sends every W-th request, so it passes over the others) cost their random draws only, not their
    words or their trimming by a tokenizer."""

    def __init__(self, rng: np.random.Generator, count: int, draw: Draw, skip: Skip | None = None):
        self.draw, self.skip, self.count = draw, skip, count
        self.digest = streamed_digest(self._first_draw(rng, 0, lambda k, _: k < count))

    def _step(self, rng: np.random.Generator, k: int, cursor: int, make: bool) -> tuple[str | None, int]:
        if make:
            return self.draw(rng, k), k + 1
        (self.skip or self.draw)(rng, k)
        return None, k + 1

    def _prompt(self, i: int) -> str:
        return self._redraw(i)


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
