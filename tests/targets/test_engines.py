"""Each engine adapter against the mock server answering as that engine documents (known truth): detection
from the server's own answers, version, the model it says it serves, and its prefix-cache reset between
repeats, or "not measured: <engine> offers no ..." where it has none."""

from __future__ import annotations

import pytest

from probes.targets import EndpointTarget, open_target
from probes.targets.engines import identify
from probes.targets.mock_server import MockServerConfig, running

CASES = [
    # engine, metrics on, version, evidence (first), engine_model
    ("vllm", True, "0.32.0", "/metrics: vllm: names", None),
    ("sglang", True, "0.5.4", "GET /server_info", "mock-model"),
    ("tgi", True, "3.3.6", "GET /info", "mock-model"),
    ("llama.cpp", True, "b6500-mock", "GET /props", "models/mock-model.gguf"),
    ("llama-cpp-python", False, None, "/v1/models: owned_by me, permissions (llama_cpp.server)", None),
    ("transformers-serve", False, None, "GET /health: status ok with an x-request-id header", None),
    ("ollama", False, "0.12.6", "GET /api/version", "mock-model"),
]


@pytest.mark.parametrize(("engine", "metrics", "version", "evidence", "model"), CASES)
def test_detected_from_its_own_answers(engine, metrics, version, evidence, model):
    with running(MockServerConfig(engine=engine, metrics=metrics)) as url:
        found, _ = identify(url, {}, "mock-model")
    assert (found.engine, found.version, found.engine_model) == (engine, version, model)
    assert found.detected_from[0] == evidence and found.served_model == "mock-model"


def test_sglang_known_by_its_metric_names_alone():
    """An SGLang whose info endpoints are behind a proxy is still known by its /metrics names."""
    with running(MockServerConfig(engine="sglang", metrics=True)) as url:
        found, _ = identify(url, {}, "m")
    assert "/metrics: sglang: names" in found.detected_from


def test_a_server_answering_nothing_of_its_own_is_generic():
    with running(MockServerConfig(engine="openai")) as url:
        found, _ = identify(url, {}, "m")
    assert found.engine == "openai" and found.detected_from == [] and found.version is None
    assert found.metrics == "not measured: an OpenAI-compatible server offers no Prometheus /metrics"


def test_stated_engine_wins():
    with running(MockServerConfig(engine="ollama")) as url:
        found, _ = identify(url, {}, "m", stated="tgi")
    assert found.engine == "tgi" and found.detected_from == ["target.engine (stated)"]


@pytest.mark.parametrize(
    ("engine", "done", "detail"),
    [
        ("vllm", True, "HTTP 200: the cache was reset"),  # vLLM's words as before
        ("sglang", True, "POST /flush_cache: HTTP 200: the cache was reset"),
        ("llama.cpp", True, "POST /slots/<id>?action=erase: 3 slot(s) erased"),
        ("tgi", False, "not measured: TGI offers no prefix-cache reset"),
        ("ollama", False, "not measured: Ollama offers no prefix-cache reset"),
    ],
)
def test_isolation_by_engine(engine, done, detail):
    with running(MockServerConfig(engine=engine, slots=3)) as url:
        with open_target(EndpointTarget(base_url=url, model="mock-model")) as live:
            isolation = live.isolate()
    assert (isolation.done, isolation.detail) == (done, detail)


def test_metrics_offer_says_what_was_served():
    with running(MockServerConfig(engine="sglang", metrics=True)) as url:
        served, _ = identify(url, {}, "m")
    with running(MockServerConfig(engine="sglang")) as url:
        absent, _ = identify(url, {}, "m")
    assert served.metrics == "sglang: names, with --enable-metrics"
    assert absent.metrics == (
        "not measured: no /metrics page of the server view's names here (SGLang: sglang: names, with --enable-metrics)"
    )


def test_notes_of_slots_and_cold_start():
    with running(MockServerConfig(engine="llama.cpp", slots=4)) as url:
        slots, _ = identify(url, {}, "m")
    with running(MockServerConfig(engine="ollama")) as url:
        cold, _ = identify(url, {}, "m")
    assert slots.notes == [
        "4 parallel slot(s) (--parallel): beyond 4 concurrent requests wait (deferred), so a capacity found above "
        "it is the slots' queue"
    ]
    assert cold.notes[0].startswith("Ollama loads a model on its first request")
