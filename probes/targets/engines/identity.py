"""Which engine serves the target, as the factsheet records it: found from the server's own answers (or
stated in the spec), with its version, the model id sent and what the engine offers the measurement."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from probes.core.measurement import Model
from probes.targets.engines.adapters import BY_NAME, ENGINES, Engine
from probes.targets.engines.survey import Survey, survey

EngineName = Literal[
    "vllm", "sglang", "tgi", "llama.cpp", "llama-cpp-python", "transformers-serve", "ollama", "openai"
]


class EngineIdentity(Model):
    """The serving engine as found before the first measured request."""

    engine: EngineName = Field(description="the engine adapter applied (docs/servers.md)")
    label: str = Field(description="the engine's name in words")
    version: str | None = Field(description="as the engine states it; None: it states none the tool reads")
    detected_from: list[str] = Field(
        description="the server's answers that name the engine; ['target.engine (stated)'] when the spec names it; "
        "empty: nothing named one, so the generic OpenAI adapter applies"
    )
    served_model: str = Field(description="the model id sent in every request")
    engine_model: str | None = Field(
        None,
        description="the model the engine says it serves (its /info, /props, /server_info), when it says",
    )
    metrics: str = Field(description="what the engine's /metrics offers the server view, or why not measured")
    cache_reset: str = Field(description="the prefix-cache reset it offers between repeats, or why none")
    notes: list[str] = Field(default_factory=list, description="how the target was read (base_url, listing)")


def identify(
    base_url: str,
    headers: dict[str, str],
    model: str,
    *,
    stated: str = "auto",
    listing: object = None,
    notes: list[str] | None = None,
) -> tuple[EngineIdentity, Engine]:
    """The engine at `base_url` (no /v1): `stated` names it, else the first adapter its answers match."""
    answers = survey(base_url, headers, listing)
    engine, evidence = _match(answers, stated)
    return (
        EngineIdentity(
            engine=engine.name,  # type: ignore[arg-type]
            label=engine.label,
            version=engine.version(answers),
            detected_from=evidence,
            served_model=model,
            engine_model=engine.engine_model(answers),
            metrics=engine.metrics_offer(bool(answers.metric_names)),
            cache_reset=engine.reset_offer(),
            notes=[*(notes or []), *engine.notes(answers)],
        ),
        engine,
    )


def _match(answers: Survey, stated: str) -> tuple[Engine, list[str]]:
    if stated != "auto":
        return BY_NAME[stated], ["target.engine (stated)"]
    for engine in ENGINES:
        evidence = engine.detect(answers)
        if evidence:
            return engine, evidence
    return BY_NAME["openai"], []
