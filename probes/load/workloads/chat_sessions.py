"""`chat-sessions`: scripted multi-turn conversations. The script (system prompt, user turns, max_tokens,
think times) is fixed by the seed before the run; the assistant turns are the server's actual replies,
filled in as they arrive (probes/load/sessions.py drives them)."""

from __future__ import annotations

import numpy as np

from probes.load.workload import Workload
from probes.load.workloads.context import BuildContext, stamped
from probes.load.workloads.plan import Plan, ScriptTurn, SessionScript, digest_json
from probes.load.workloads.profiles import ChatSessionsProfile
from probes.load.workloads.vocabulary import Vocabulary, join

GENERATOR_VERSION = "chat-sessions/1"


def _user_len(rng: np.random.Generator, p: ChatSessionsProfile) -> int:
    lo = max(1, round(p.user_turn_len * (1 - p.user_turn_spread)))
    hi = max(lo, round(p.user_turn_len * (1 + p.user_turn_spread)))
    return int(rng.integers(lo, hi + 1))


def _think_s(rng: np.random.Generator, p: ChatSessionsProfile) -> float:
    if p.think_time_distribution == "exponential" and p.think_time_ms > 0:
        return float(rng.exponential(p.think_time_ms)) / 1000
    return p.think_time_ms / 1000


def scripts(p: ChatSessionsProfile, ctx: BuildContext) -> list[SessionScript]:
    """Sessions until `ctx.count` turns in all (the last one cut short if it would exceed it)."""
    rng = np.random.default_rng(ctx.seed)
    vocab = Vocabulary(ctx.tokenizer_path)
    system = join(vocab.draw(rng, p.system_prompt_len))  # one system prompt, shared by every session
    out_len = p.output_len or ctx.output_len
    sessions: list[SessionScript] = []
    index = 0
    while index < ctx.count:
        n = min(int(rng.integers(p.turns_min, p.turns_max + 1)), ctx.count - index)
        turns = []
        for k in range(n):
            think = _think_s(rng, p) if k else 0.0
            turns.append(ScriptTurn(index + k, join(vocab.draw(rng, _user_len(rng, p))), out_len, think))
        sessions.append(SessionScript(len(sessions), system, turns))
        index += n
    return sessions


def build(profile: ChatSessionsProfile, ctx: BuildContext) -> Plan:
    sessions = scripts(profile, ctx)
    script = [
        {"system": s.system, "turns": [[t.user, t.max_tokens, t.think_s] for t in s.turns]} for s in sessions
    ]
    vocab_method = Vocabulary(ctx.tokenizer_path).method
    spread = f" (uniform ±{profile.user_turn_spread:g})" if profile.user_turn_spread else ""
    workload = Workload(
        prompts_digest=digest_json(script),
        input_len=profile.user_turn_len,
        length_method=(
            f"{len(sessions)} sessions of {profile.turns_min}–{profile.turns_max} turns (uniform): a shared "
            f"{profile.system_prompt_len}-token system prompt, user turns of {profile.user_turn_len} tokens"
            f"{spread}, each turn carrying every earlier turn with the server's actual reply; {vocab_method}"
        ),
        num_prompts=sum(len(s.turns) for s in sessions),
        source="chat-sessions",
        output_lens_digest=None,
        output_len_method=f"max_tokens {profile.output_len or ctx.output_len} per turn",
    )
    return Plan([], None, stamped(workload, profile, GENERATOR_VERSION), sessions=sessions)
