"""The parameters of each workload profile, as a spec (`load.workload`) or `probe load --workload` states
them and a factsheet records them. One pydantic model a profile, told apart by `profile`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from probes.core.measurement import Count, Model, Quantity
from probes.core.untrusted.limits import (
    MAX_REQUESTS,
    MAX_SESSION_TURNS,
    MAX_THINK_MS,
    MAX_TIME_SCALE,
    MAX_TOKENS,
)

OUTPUT_LEN = "max_tokens per request; none: the load section's output_len"


class SyntheticProfile(Model):
    """Independent prompts of random common words (the default; the prompts of every earlier version)."""

    profile: Literal["synthetic"] = "synthetic"
    length_distribution: Literal["fixed", "uniform", "normal"] = Field(
        "fixed", description="spread of prompt and output lengths around the load section's input/output_len"
    )
    length_spread: Quantity = Field(0.0, ge=0, le=1, description="uniform range ratio or normal sd / mean")

    @model_validator(mode="after")
    def _spread(self) -> SyntheticProfile:
        if self.length_distribution == "fixed" and self.length_spread:
            raise ValueError("length_spread needs length_distribution 'uniform' or 'normal'")
        return self


class CodeProfile(Model):
    """HumanEval+ task prompts, shuffled with the seed and cycled."""

    profile: Literal["code"] = "code"
    path: str | None = Field(None, description="HumanEval+ .jsonl.gz; none: the copy beside the checkout")
    output_len: Count | None = Field(None, ge=1, le=MAX_TOKENS, description=OUTPUT_LEN)


class JsonlProfile(Model):
    """The user's prompts, one JSON object a line with `prompt` (and optional `output_len`)."""

    profile: Literal["jsonl"] = "jsonl"
    path: str = Field(description="the .jsonl file")
    output_len: Count | None = Field(None, ge=1, le=MAX_TOKENS, description=OUTPUT_LEN)


class SharedPrefixProfile(Model):
    """vLLM `prefix_repetition` semantics: `num_prefixes` prefixes of `prefix_len` tokens, every prompt one of
    them plus a unique suffix of `suffix_len` tokens; prompts of a group are spread over the run (seed order)."""

    profile: Literal["shared-prefix"] = "shared-prefix"
    num_prefixes: Count = Field(4, ge=1, le=MAX_REQUESTS, description="G: groups, one shared prefix each")
    prefix_len: Count = Field(256, ge=0, le=MAX_TOKENS, description="P: shared prefix, tokens")
    suffix_len: Count = Field(256, ge=1, le=MAX_TOKENS, description="unique suffix, tokens")
    output_len: Count | None = Field(None, ge=1, le=MAX_TOKENS, description=OUTPUT_LEN)

    @property
    def shared_fraction(self) -> float:
        return self.prefix_len / (self.prefix_len + self.suffix_len)


class LongContextProfile(Model):
    """RAG-like: a long distinct document and a short question per prompt, a short answer."""

    profile: Literal["long-context"] = "long-context"
    document_len: Count = Field(
        1536, ge=1, le=MAX_TOKENS, description="document tokens per prompt (distinct per prompt)"
    )
    question_len: Count = Field(32, ge=1, le=MAX_TOKENS, description="question tokens after the document")
    output_len: Count | None = Field(16, ge=1, le=MAX_TOKENS, description=OUTPUT_LEN)


class ChatSessionsProfile(Model):
    """Multi-turn conversations on the chat endpoint: each turn sends the system prompt, every earlier user
    turn with the server's actual reply, and the new user turn. Closed loop: `concurrency` users each run one
    session after another; open loop: sessions start at `rate` sessions/s."""

    profile: Literal["chat-sessions"] = "chat-sessions"
    system_prompt_len: Count = Field(
        128, ge=0, le=MAX_TOKENS, description="shared system prompt, tokens (0: none)"
    )
    turns_min: Count = Field(
        2, ge=1, le=MAX_SESSION_TURNS, description="turns per session: uniform integer in [min, max]"
    )
    turns_max: Count = Field(4, ge=1, le=MAX_SESSION_TURNS)
    user_turn_len: Count = Field(64, ge=1, le=MAX_TOKENS, description="user turn, tokens (mean)")
    user_turn_spread: Quantity = Field(
        0.0, ge=0, le=1, description="user turn length uniform on mean·[1 − spread, 1 + spread]"
    )
    output_len: Count | None = Field(None, ge=1, le=MAX_TOKENS, description=OUTPUT_LEN)
    think_time_ms: Quantity = Field(
        0.0, ge=0, le=MAX_THINK_MS, description="pause between a reply and the next turn (mean)"
    )
    think_time_distribution: Literal["fixed", "exponential"] = "fixed"

    @model_validator(mode="after")
    def _turns(self) -> ChatSessionsProfile:
        if self.turns_max < self.turns_min:
            raise ValueError("turns_max must be ≥ turns_min")
        return self


class TraceProfile(Model):
    """Replay of a JSONL trace (Mooncake format) at its absolute schedule."""

    profile: Literal["trace"] = "trace"
    path: str = Field(description="JSONL: timestamp (ms), input_length, output_length, optional hash_ids")
    time_scale: Quantity = Field(
        1.0, gt=0, le=MAX_TIME_SCALE, description="send time = timestamp × time_scale (0.5: twice as fast)"
    )
    block_size: Count = Field(
        512, ge=1, le=MAX_TOKENS, description="tokens per hash_ids block (Mooncake: 512)"
    )


WorkloadProfile = Annotated[
    SyntheticProfile
    | CodeProfile
    | JsonlProfile
    | SharedPrefixProfile
    | LongContextProfile
    | ChatSessionsProfile
    | TraceProfile,
    Field(discriminator="profile"),
]
PROFILE_NAMES = ("synthetic", "chat-sessions", "shared-prefix", "long-context", "code", "jsonl", "trace")


def turns_per_user(profile: WorkloadProfile | None) -> int:
    """The requests a closed-loop user sends in one go: a whole chat session (turns_max, each user runs whole
    sessions), else one."""
    return profile.turns_max if isinstance(profile, ChatSessionsProfile) else 1


def nominal_lengths(profile: WorkloadProfile | None) -> tuple[int | None, int | None]:
    """(prompt tokens, max_tokens) a load point states for `profile`: its own where it sets them; None where
    the load section's lengths hold (synthetic, code, jsonl; a trace states its mean input length itself)."""
    match profile:
        case SharedPrefixProfile():
            return profile.prefix_len + profile.suffix_len, profile.output_len
        case LongContextProfile():
            return profile.document_len + profile.question_len, profile.output_len
        case ChatSessionsProfile():
            return profile.user_turn_len, profile.output_len
        case CodeProfile() | JsonlProfile():
            return None, profile.output_len
    return None, None
