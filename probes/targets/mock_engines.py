"""The serving engines' documented behaviours, for the mock server (`MockServerConfig.engine`): each one's
identity endpoints, its `/metrics` names, and how its streams end (docs/servers.md, from each project's
documentation; /work/shared/docs/server-references.md lists the sources). The adapters in
probes/targets/engines/ are tested against these known answers, since SGLang, TGI and Ollama cannot run here.
"""

from __future__ import annotations

from typing import Literal

from aiohttp import web
from pydantic import Field

from probes.core.measurement import Model

MockEngine = Literal[
    "vllm", "sglang", "tgi", "llama.cpp", "llama-cpp-python", "transformers-serve", "ollama", "openai"
]
ENGINE_VERSION = {
    "vllm": "0.32.0",
    "sglang": "0.5.4",
    "tgi": "3.3.6",
    "llama.cpp": "b6500",
    "ollama": "0.12.6",
}


class Behaviour(Model):
    """How an engine answers a streamed request, each switch settable on its own (None in the config: the
    engine's documented default)."""

    send_done: bool = Field(True, description="a stream ends with `data: [DONE]`")
    usage: Literal["on_request", "always", "never"] = Field(
        "on_request",
        description="usage in the stream: when `stream_options.include_usage` asks, in every final chunk, or never",
    )
    finish_reason: bool = Field(True, description="the last content chunk carries finish_reason")
    interrupts: bool = Field(
        False, description="a new request cuts every running stream (which still ends as the engine ends one)"
    )
    honours_ignore_eos: bool = Field(True, description="`ignore_eos: true` makes a reply run to max_tokens")
    models_listing: Literal["object", "bare_list", "empty"] = Field(
        "object",
        description="/v1/models: {object: list, data: [...]}, a bare JSON list, or an empty data list",
    )


BEHAVIOURS: dict[str, Behaviour] = {
    "vllm": Behaviour(),
    "sglang": Behaviour(),
    "tgi": Behaviour(usage="always", honours_ignore_eos=False),
    "llama.cpp": Behaviour(usage="always"),
    # interrupt_requests is on by default: a new request cancels the running stream, which still ends with
    # [DONE] and no finish_reason.
    "llama-cpp-python": Behaviour(usage="never", interrupts=True, honours_ignore_eos=False),
    # ends after the chunk with finish_reason (and usage), without [DONE]; a local folder is not listed.
    "transformers-serve": Behaviour(
        send_done=False, usage="always", honours_ignore_eos=False, models_listing="empty"
    ),
    "ollama": Behaviour(honours_ignore_eos=False),
    "openai": Behaviour(honours_ignore_eos=False),
}

# The mock's state in each engine's own names (None: the engine has no such family).
METRIC_NAMES: dict[str, dict[str, str | None]] = {
    "vllm": {
        "running": "vllm:num_requests_running",
        "waiting": "vllm:num_requests_waiting",
        "kv": "vllm:kv_cache_usage_perc",
        "queries": "vllm:prefix_cache_queries",
        "hits": "vllm:prefix_cache_hits",
        "preemptions": "vllm:num_preemptions",
        "ttft": "vllm:time_to_first_token_seconds",
        "e2el": "vllm:e2e_request_latency_seconds",
    },
    "sglang": {
        "running": "sglang:num_running_reqs",
        "waiting": "sglang:num_queue_reqs",
        "kv": "sglang:token_usage",
        "queries": "sglang:prompt_tokens",
        "hits": "sglang:cached_tokens",
        "preemptions": None,
        "ttft": "sglang:time_to_first_token_seconds",
        "e2el": "sglang:e2e_request_latency_seconds",
    },
    "tgi": {
        "running": "tgi_batch_current_size",
        "waiting": "tgi_queue_size",
        "kv": None,
        "queries": None,
        "hits": None,
        "preemptions": None,
        "ttft": None,
        "e2el": "tgi_request_duration",
    },
    "llama.cpp": {
        "running": "llamacpp:requests_processing",
        "waiting": "llamacpp:requests_deferred",
        "kv": "llamacpp:kv_cache_usage_ratio",
        "queries": None,
        "hits": None,
        "preemptions": None,
        "ttft": None,
        "e2el": None,
    },
}


def metric_names(engine: str) -> dict[str, str | None]:
    """The engine's names; an engine without /metrics (llama-cpp-python, transformers serve, Ollama) is served
    vLLM's when a test asks for a page anyway."""
    return METRIC_NAMES.get(engine, METRIC_NAMES["vllm"])


def models_body(engine: str, listing: str, model: str) -> object:
    owner = {"vllm": "vllm", "llama-cpp-python": "me", "ollama": "library", "sglang": "sglang"}.get(
        engine, "owner"
    )
    entry: dict = {"id": model, "object": "model", "owned_by": owner}
    if engine == "llama-cpp-python":
        entry["permissions"] = []
    if listing == "bare_list":
        return [entry]
    return {"object": "list", "data": [] if listing == "empty" else [entry]}


def identity_routes(engine: str, model: str, slots: int, on_reset) -> list[web.RouteDef]:
    """The engine's own identity (and cache) endpoints, answering as its documentation shows."""
    version = ENGINE_VERSION.get(engine)

    def answer(body: object):
        async def handler(_: web.Request) -> web.Response:
            return web.json_response(body)

        return handler

    async def reset(request: web.Request) -> web.Response:
        on_reset()
        if engine == "llama.cpp":
            return web.json_response({"id_slot": int(request.match_info.get("slot", 0)), "n_erased": 0})
        return web.Response(text="Cache flushed.\n")

    if engine == "vllm":
        return [web.get("/version", answer({"version": version}))]
    if engine == "sglang":
        info = {"version": version, "model_path": model, "tp_size": 1, "served_model_name": model}
        return [
            web.get("/get_server_info", answer(info)),
            web.get("/server_info", answer(info)),
            web.get("/get_model_info", answer({"model_path": model, "is_generation": True})),
            web.post("/flush_cache", reset),
        ]
    if engine == "tgi":
        info = {
            "model_id": model, "model_sha": None, "model_dtype": "torch.float16", "model_device_type": "cuda",
            "max_concurrent_requests": slots, "max_input_tokens": 4095, "max_total_tokens": 4096,
            "version": version, "sha": None, "router": "text-generation-router",
        }  # fmt: skip
        return [web.get("/info", answer(info))]
    if engine == "llama.cpp":
        props = {
            "default_generation_settings": {"n_ctx": 4096}, "total_slots": slots,
            "model_path": f"models/{model}.gguf", "build_info": f"{version}-mock", "chat_template": "",
        }  # fmt: skip
        return [
            web.get("/props", answer(props)),
            web.get("/health", answer({"status": "ok"})),
            web.post("/slots/{slot}", reset),
        ]
    if engine == "transformers-serve":
        return [web.get("/health", answer({"status": "ok"}))]
    if engine == "ollama":
        return [
            web.get("/api/version", answer({"version": version})),
            web.get("/api/ps", answer({"models": [{"name": model, "model": model}]})),
        ]
    return []
