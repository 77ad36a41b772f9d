"""What a point sends, built by a profile before the run: independent requests (with a schedule for a
trace) or session scripts whose later turns wait for the server's replies."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from probes.core.digests import sha256_bytes
from probes.load.workloads.workload import SystemPrompt, Workload


@dataclass(frozen=True)
class ScriptTurn:
    index: int  # the request's index in the point (script order, not send order)
    user: str
    max_tokens: int
    think_s: float  # pause before this turn is sent, after the previous reply (0 for the first)


@dataclass(frozen=True)
class SessionScript:
    session: int
    system: str  # "" → no system message
    turns: list[ScriptTurn]


class SessionScripts(Sequence[SessionScript]):
    """A chat-sessions point's scripts, session i made when it is asked for (workloads/chat_sessions.py).
    `systems`: each distinct system prompt and how many sessions carry it, counted when the scripts were
    first drawn (so naming them does not draw every script again)."""

    systems: dict[str, int]


@dataclass
class Plan:
    prompts: Sequence[str]  # made when each is asked for (workloads/drawn.py, trace); a caller's list
    output_lens: list[int] | None
    workload: Workload
    offsets: list[float] | None = None  # trace: send times (s from the run's start)
    sessions: SessionScripts | None = None  # chat-sessions
    count: int = field(default=0)  # requests the plan holds

    def __post_init__(self) -> None:
        if not self.count:
            self.count = sum(len(s.turns) for s in self.sessions) if self.sessions else len(self.prompts)


def digest_json(obj) -> str:
    # The same spelling as the synthetic prompts' digest (json.dumps defaults), so every profile's
    # generated-text digest is computed one way.
    return sha256_bytes(json.dumps(obj).encode())


def system_prompts(plan: Plan) -> list[SystemPrompt]:
    """The distinct system prompts `plan` sends, in the order first sent: only session scripts carry one
    (every other request is sent as its prompt alone, probes/load/client.py)."""
    seen = plan.sessions.systems if plan.sessions is not None else {}
    return [
        SystemPrompt(sha256=sha256_bytes(text.encode()), size_bytes=len(text.encode()), sessions=n)
        for text, n in seen.items()
    ]


def merged_prompts(runs: list[list[SystemPrompt] | None]) -> list[SystemPrompt] | None:
    """The system prompts several runs sent, each distinct one once (in the order first sent) with the
    sessions of every run that sent it; None when a run's were not recorded (a checkpoint of an older
    build), since the union would then leave that run's out."""
    if any(r is None for r in runs):
        return None
    seen: dict[str, SystemPrompt] = {}
    for prompt in (p for r in runs for p in r):
        was = seen.get(prompt.sha256)
        seen[prompt.sha256] = (
            prompt if was is None else was.model_copy(update={"sessions": was.sessions + prompt.sessions})
        )
    return list(seen.values())
