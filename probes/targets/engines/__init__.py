"""Serving engines as adapters with one interface (vLLM, SGLang, TGI, llama.cpp server, llama-cpp-python,
transformers serve, Ollama, a generic OpenAI-compatible server): detection from the server's own answers,
identity and version, what each offers the server view and isolation, and the remedies for its quirks."""

from probes.targets.engines.adapters import BY_NAME, ENGINES, Engine
from probes.targets.engines.identity import EngineIdentity, EngineName, identify
from probes.targets.engines.survey import Survey, survey

__all__ = ["BY_NAME", "ENGINES", "Engine", "EngineIdentity", "EngineName", "Survey", "identify", "survey"]
