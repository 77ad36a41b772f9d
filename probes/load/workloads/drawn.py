"""Prompts drawn one after another from one random stream (long-context, shared-prefix), generated when each
is asked for: the stream's state is kept every CHECKPOINT prompts, so prompt i is redrawn from the checkpoint
before it, and the next prompt in order from where the last one ended. The text is the one the same stream
drawn into a list gives, byte for byte; what is held is a state per CHECKPOINT prompts, never the text."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence

import numpy as np

from probes.core.digests import prefixed

CHECKPOINT = 256  # prompts between two kept states (a state is ~0.3 kB; redrawing to i costs < this many)

# (stream, request index) → the request's prompt, drawing from the stream what it needs
Draw = Callable[[np.random.Generator, int], str]


class DrawnPrompts(Sequence[str]):
    """`count` prompts drawn by `draw` from `rng` in index order. Building it draws every prompt once
    (for `digest`, that of json.dumps of the whole list) and leaves `rng` after the last, as a list would."""

    def __init__(self, rng: np.random.Generator, count: int, draw: Draw):
        self.draw, self.count = draw, count
        self.states: list[dict] = []
        h = hashlib.sha256(b"[")
        for i in range(count):
            if i % CHECKPOINT == 0:
                self.states.append(rng.bit_generator.state)
            h.update((", " if i else "").encode() + json.dumps(draw(rng, i)).encode())
        h.update(b"]")
        self.digest = prefixed(h.hexdigest())
        self._rng: np.random.Generator | None = None
        self._next = -1  # the index the kept stream would draw next

    def __getstate__(self) -> dict:  # a worker process is sent the states, not the stream in use
        return {**self.__dict__, "_rng": None, "_next": -1}

    def __len__(self) -> int:
        return self.count

    # Equal to another DrawnPrompts with the same prompts (the digest covers every one, in order), and to
    # a list holding them: build_plan's result is compared, and a Sequence has no equality of its own.
    def __eq__(self, other: object) -> bool:
        if isinstance(other, DrawnPrompts):
            return self.count == other.count and self.digest == other.digest
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == self.count and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable stream position; equality by content

    def __getitem__(self, i):  # an int: one prompt (Sequence's iteration and slicing build on it)
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self.count))]
        if i < 0:
            i += self.count
        if not 0 <= i < self.count:
            raise IndexError(i)
        if self._rng is None or not self._next <= i < self._next + CHECKPOINT:
            self._rng = np.random.default_rng()
            self._rng.bit_generator.state = self.states[i // CHECKPOINT]
            self._next = i - i % CHECKPOINT
        while self._next < i:  # the prompts between, drawn and let go
            self.draw(self._rng, self._next)
            self._next += 1
        self._next += 1
        return self.draw(self._rng, i)
