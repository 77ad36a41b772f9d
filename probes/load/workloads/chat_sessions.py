"""`chat-sessions`: scripted multi-turn conversations. The script (system prompt, user turns, max_tokens,
think times) is fixed by the seed; the assistant turns are the server's actual replies, filled in as they
arrive (probes/load/sessions.py drives them). Each session's script is drawn when it is due (`DrawnSessions`),
never all held: memory is that of the stream's checkpoints, not of the run's length.

Measured (200,000 turns of the default profile, 66,620 sessions, seed 0; tracemalloc peak of building the
plan; build time without tracemalloc; 2-core host): every script built up front (main at df273c2) peaked
at 334.0 MiB, built in 4.4 s; drawn when due, 0.2 MiB in 3.6 s (every script is drawn once for the digest,
and again when its session starts)."""

from __future__ import annotations

import numpy as np

from probes.load.workloads.context import BuildContext, stamped
from probes.load.workloads.drawn import Checkpointed, Lazy, streamed_digest
from probes.load.workloads.plan import Plan, ScriptTurn, SessionScript, SessionScripts
from probes.load.workloads.profiles import ChatSessionsProfile
from probes.load.workloads.vocabulary import Vocabulary, draw_words, join
from probes.load.workloads.workload import Workload

GENERATOR_VERSION = "chat-sessions/1"


def _user_len(rng: np.random.Generator, p: ChatSessionsProfile) -> int:
    lo = max(1, round(p.user_turn_len * (1 - p.user_turn_spread)))
    hi = max(lo, round(p.user_turn_len * (1 + p.user_turn_spread)))
    return int(rng.integers(lo, hi + 1))


def _think_s(rng: np.random.Generator, p: ChatSessionsProfile) -> float:
    if p.think_time_distribution == "exponential" and p.think_time_ms > 0:
        return float(rng.exponential(p.think_time_ms)) / 1000
    return p.think_time_ms / 1000


class DrawnSessions(SessionScripts, Checkpointed[SessionScript], Lazy[SessionScript]):
    """Sessions until `ctx.count` turns in all (the last one cut short if it would exceed it), drawn from one
    stream seeded by `ctx.seed`: the shared system prompt first, then each session's turn count and, turn by
    turn, its think time, user-turn length and words. Session i is redrawn from the checkpoint before it
    (its state and the session's first request index); the sessions between are passed over at the cost of
    their random draws (a worker process runs every W-th session). Building it draws every session once, for
    `digest` (that of the JSON list of every session's system prompt and turns) and the count of sessions."""

    def __init__(self, p: ChatSessionsProfile, ctx: BuildContext):
        rng = np.random.default_rng(ctx.seed)
        vocab = Vocabulary(ctx.tokenizer_path)
        self.profile, self.words, self.turns, self.method = p, vocab.words, ctx.count, vocab.method
        self.system = join(vocab.draw(rng, p.system_prompt_len))  # one system prompt, shared by every session
        self.out_len = p.output_len or ctx.output_len
        self.count = 0
        self.digest = streamed_digest(
            self._spelled(self._first_draw(rng, 0, lambda _, first: first < ctx.count))
        )
        self.systems = {self.system: self.count} if self.system else {}

    def _spelled(self, sessions):
        for s in sessions:
            self.count += 1
            yield {"system": s.system, "turns": [[t.user, t.max_tokens, t.think_s] for t in s.turns]}

    def _step(self, rng, k: int, first: int, make: bool) -> tuple[SessionScript | None, int]:
        p = self.profile
        n = min(int(rng.integers(p.turns_min, p.turns_max + 1)), self.turns - first)
        turns = []
        for j in range(n):
            think = _think_s(rng, p) if j else 0.0
            length = _user_len(rng, p)
            if make:
                turns.append(
                    ScriptTurn(first + j, join(draw_words(self.words, rng, length)), self.out_len, think)
                )
            else:  # draw_words's one draw, no words made
                rng.integers(0, len(self.words), size=length)
        return (SessionScript(k, self.system, turns) if make else None), first + n

    def _item(self, i: int) -> SessionScript:
        return self._redraw(i)

    # Equal to another drawing of the same scripts (the digest covers every session, in order): build_plan's
    # result is compared, and a Sequence has no equality of its own.
    def __eq__(self, other: object) -> bool:
        if isinstance(other, DrawnSessions):
            return (self.count, self.digest, self.turns) == (other.count, other.digest, other.turns)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable read position; equality by content


def scripts(p: ChatSessionsProfile, ctx: BuildContext) -> DrawnSessions:
    """The point's session scripts, each drawn when asked for."""
    return DrawnSessions(p, ctx)


def build(profile: ChatSessionsProfile, ctx: BuildContext) -> Plan:
    sessions = scripts(profile, ctx)
    spread = f" (uniform ±{profile.user_turn_spread:g})" if profile.user_turn_spread else ""
    workload = Workload(
        prompts_digest=sessions.digest,
        input_len=profile.user_turn_len,
        length_method=(
            f"{len(sessions)} sessions of {profile.turns_min}–{profile.turns_max} turns (uniform): a shared "
            f"{profile.system_prompt_len}-token system prompt, user turns of {profile.user_turn_len} tokens"
            f"{spread}, each turn carrying every earlier turn with the server's actual reply; {sessions.method}"
        ),
        num_prompts=ctx.count,  # every session's turns: the last session is cut to make the count
        source="chat-sessions",
        output_lens_digest=None,
        output_len_method=f"max_tokens {profile.output_len or ctx.output_len} per turn",
    )
    return Plan([], None, stamped(workload, profile, GENERATOR_VERSION), sessions=sessions, count=ctx.count)
