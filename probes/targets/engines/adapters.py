"""Serving engines as adapters with one interface: how each is recognised from its own answers, its version,
the model it says it serves, what its /metrics offers the server view, how its prefix cache is reset between
repeats, and the remedy for each way it can void a measurement (docs/servers.md holds the same facts for a
reader; the mock server answers as each documents: probes/targets/mock_engines.py)."""

from __future__ import annotations

import httpx

from probes.targets.engines.survey import Survey
from probes.targets.isolation import CACHE_RESET, RESET_TIMEOUT_S, Isolation, reset_prefix_cache

MAX_SLOTS = 1024  # a server stating more slots than this is erased up to here (and says so by its count)


class Engine:
    """One serving engine. `detect` gives the evidence that the surveyed server is this engine (empty: it is
    not); the other facts are the engine's documented ones."""

    name = "openai"
    label = "an OpenAI-compatible server"
    # how the engine serves /metrics (None: it offers none), in words for the factsheet and docs/servers.md
    metrics: str | None = None
    # the prefix-cache reset it offers (method and path), else None
    reset: str | None = None
    # a flag that makes the measurement valid, by the conformance check it answers
    remedies: dict[str, str] = {}

    def detect(self, s: Survey) -> list[str]:
        return []

    def version(self, s: Survey) -> str | None:
        return None

    def engine_model(self, s: Survey) -> str | None:
        """The model the engine says it serves, where it says so outside /v1/models."""
        return None

    def notes(self, s: Survey) -> list[str]:
        """What the engine's answers say about how to read the measurement (its slots, a cold start)."""
        return []

    def metrics_offer(self, served: bool = True) -> str:
        """What /metrics offers the server view: the engine's names when the server served them; else why not."""
        if self.metrics is None:
            return f"not measured: {self.label} offers no Prometheus /metrics"
        if not served:
            return f"not measured: no /metrics page of the server view's names here ({self.label}: {self.metrics})"
        return self.metrics

    def reset_offer(self) -> str:
        return self.reset or f"not measured: {self.label} offers no prefix-cache reset"

    def reset_cache(self, base_url: str, api_key: str | None) -> Isolation:
        """Reset the engine's prefix cache: done when it answers 2xx; stated, never raised, otherwise."""
        if self.reset is None:
            return Isolation(method=CACHE_RESET, done=False, detail=self.reset_offer())
        return reset_prefix_cache(base_url, api_key, self.reset.split(" ", 1)[1])


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class Vllm(Engine):
    name, label = "vllm", "vLLM"
    metrics = "vllm: names, on by default"
    reset = "POST /reset_prefix_cache"  # only with VLLM_SERVER_DEV_MODE=1; 404 otherwise (stated)

    def detect(self, s: Survey) -> list[str]:
        found = []
        if s.metric_prefixed("vllm:"):
            found.append("/metrics: vllm: names")
        if any(m.get("owned_by") == "vllm" for m in s.listed()):
            found.append("/v1/models: owned_by vllm")
        if found and _str(s.obj("/version").get("version")):
            found.append("GET /version")
        return found

    def version(self, s: Survey) -> str | None:
        return _str(s.obj("/version").get("version"))


class Sglang(Engine):
    name, label = "sglang", "SGLang"
    metrics = "sglang: names, with --enable-metrics"
    reset = "POST /flush_cache"

    def _info(self, s: Survey) -> tuple[str, dict]:
        for path in ("/server_info", "/get_server_info"):
            info = s.obj(path)
            if _str(info.get("version")) and ({"tp_size", "model_path", "served_model_name"} & info.keys()):
                return path, info
        return "", {}

    def detect(self, s: Survey) -> list[str]:
        path, _ = self._info(s)
        found = [f"GET {path}"] if path else []
        return found + (["/metrics: sglang: names"] if s.metric_prefixed("sglang:") else [])

    def version(self, s: Survey) -> str | None:
        return _str(self._info(s)[1].get("version"))

    def engine_model(self, s: Survey) -> str | None:
        info = self._info(s)[1]
        return _str(info.get("served_model_name")) or _str(info.get("model_path"))


class Tgi(Engine):
    name, label = "tgi", "TGI"
    metrics = "tgi_ names, on by default (no TTFT histogram, no KV-cache gauge, no prefix-cache counters)"

    def detect(self, s: Survey) -> list[str]:
        info = s.obj("/info")
        found = ["GET /info"] if _str(info.get("model_id")) and "max_total_tokens" in info else []
        return found + (["/metrics: tgi_ names"] if s.metric_prefixed("tgi_") else [])

    def version(self, s: Survey) -> str | None:
        return _str(s.obj("/info").get("version"))

    def engine_model(self, s: Survey) -> str | None:
        return _str(s.obj("/info").get("model_id"))


class LlamaCppServer(Engine):
    name, label = "llama.cpp", "llama.cpp server"
    metrics = "llamacpp: names, with --metrics (no latency histograms, no prefix-cache counters)"
    reset = "POST /slots/{id}?action=erase"  # every slot, with --slots
    remedies = {
        "concurrency": "start it with --parallel N (N slots at least the concurrency measured) and without "
        "--no-cont-batching",
    }

    def detect(self, s: Survey) -> list[str]:
        props = s.obj("/props")
        found = ["GET /props"] if "total_slots" in props or "default_generation_settings" in props else []
        return found + (["/metrics: llamacpp: names"] if s.metric_prefixed("llamacpp:") else [])

    def version(self, s: Survey) -> str | None:
        return _str(s.obj("/props").get("build_info"))

    def engine_model(self, s: Survey) -> str | None:
        props = s.obj("/props")
        return _str(props.get("model_alias")) or _str(props.get("model_path"))

    def notes(self, s: Survey) -> list[str]:
        slots = s.obj("/props").get("total_slots")
        if not isinstance(slots, int) or isinstance(slots, bool):
            return []
        return [f"{slots} parallel slot(s) (--parallel): beyond {slots} concurrent requests wait (deferred), so a "
                "capacity found above it is the slots' queue"]  # fmt: skip

    def reset_cache(self, base_url: str, api_key: str | None) -> Isolation:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        try:
            slots = int(
                httpx.get(base_url + "/props", headers=headers, timeout=RESET_TIMEOUT_S).json()["total_slots"]
            )
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return Isolation(method=CACHE_RESET, done=False, detail="GET /props: total_slots not read")
        for i in range(max(1, min(slots, MAX_SLOTS))):
            erased = reset_prefix_cache(base_url, api_key, f"/slots/{i}?action=erase")
            if not erased.done:
                return erased
        return Isolation(
            method=CACHE_RESET, done=True, detail=f"POST /slots/<id>?action=erase: {slots} slot(s) erased"
        )


class LlamaCppPython(Engine):
    name, label = "llama-cpp-python", "llama-cpp-python server"
    remedies = {
        "concurrency": "start it with --interrupt_requests False",
    }

    def detect(self, s: Survey) -> list[str]:
        listed = s.listed()
        if listed and all(m.get("owned_by") == "me" and "permissions" in m for m in listed):
            return ["/v1/models: owned_by me, permissions (llama_cpp.server)"]
        return []


class TransformersServe(Engine):
    name, label = "transformers-serve", "transformers serve"

    def detect(self, s: Survey) -> list[str]:
        health = s.answers.get("/health")
        if health is None or health.obj().get("status") != "ok" or "x-request-id" not in health.headers:
            return []
        return ["GET /health: status ok with an x-request-id header"]


class Ollama(Engine):
    name, label = "ollama", "Ollama"

    def detect(self, s: Survey) -> list[str]:
        return ["GET /api/version"] if _str(s.obj("/api/version").get("version")) else []

    def version(self, s: Survey) -> str | None:
        return _str(s.obj("/api/version").get("version"))

    def engine_model(self, s: Survey) -> str | None:
        models = s.obj("/api/ps").get("models")
        names = [m.get("name") for m in models if isinstance(m, dict)] if isinstance(models, list) else []
        return ", ".join(n for n in names if isinstance(n, str)) or None

    def notes(self, s: Survey) -> list[str]:
        return ["Ollama loads a model on its first request: that request's TTFT holds the load (warm-up requests "
                "take it out of the measured ones)"]  # fmt: skip


class GenericOpenAI(Engine):
    """A server that answers none of the engines' own endpoints: the OpenAI API alone."""


# In the order they are tried: the engines with an identity endpoint of their own first, the ones known only
# by their listing or headers after, the generic one last.
ENGINES: tuple[Engine, ...] = (
    Ollama(),
    Tgi(),
    Sglang(),
    LlamaCppServer(),
    Vllm(),
    LlamaCppPython(),
    TransformersServe(),
    GenericOpenAI(),
)
BY_NAME = {e.name: e for e in ENGINES}
