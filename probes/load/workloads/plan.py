"""What a point sends, built by a profile before the run: independent requests (with a schedule for a
trace) or session scripts whose later turns wait for the server's replies."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from probes.core.digests import sha256_bytes
from probes.load.workload import SystemPrompt, Workload


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


@dataclass
class Plan:
    prompts: list[str]
    output_lens: list[int] | None
    workload: Workload
    offsets: list[float] | None = None  # trace: send times (s from the run's start)
    sessions: list[SessionScript] | None = None  # chat-sessions
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
    seen: dict[str, int] = {}
    for script in plan.sessions or []:
        if script.system:
            seen[script.system] = seen.get(script.system, 0) + 1
    return [
        SystemPrompt(sha256=sha256_bytes(text.encode()), size_bytes=len(text.encode()), sessions=n)
        for text, n in seen.items()
    ]
