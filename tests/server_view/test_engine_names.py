"""The server view read from each engine's own /metrics names (page.ALIASES), against the mock server serving
that engine's names with values known from what it did; a figure the engine offers no family for is "not
measured: <engine> offers no ...", and a vLLM page keeps its words (older documents re-derive unchanged)."""

from __future__ import annotations

import asyncio

import pytest

from probes.core.measurement import NotMeasured
from probes.load import SLO, LoadPoint, run_point
from probes.load.workloads.workload import synthetic_prompts
from probes.server_view import ServerView, ServerViewSpec
from probes.server_view.figures import DEFINITIONS, SOURCE
from probes.server_view.scraper import waiting_total
from probes.targets.mock_server import MockServerConfig, running

POINT = LoadPoint.at(concurrency=4, num_requests=12, input_len=24, output_len=8)


def _view(engine: str) -> ServerView:
    cfg = MockServerConfig(
        engine=engine, ttft_ms=150, itl_ms=10, slots=4, metrics=True, prefix_hit_fraction=0.5
    )
    with running(cfg) as url:
        result = asyncio.run(
            run_point(
                url,
                "mock-model",
                POINT,
                SLO(ttft_ms=1000, e2el_ms=2000),
                server_view=ServerViewSpec(interval_s=0.1),
            )
        )
    assert isinstance(result.server_view, ServerView)
    return result.server_view


def test_sglang_names_read_as_the_views():
    view = _view("sglang")
    words = [len(p.split()) for p in synthetic_prompts(12, 24, 0)[0]]
    hit = view.prefix_cache_hit_rate
    assert hit.queries == sum(words) and hit.hits == sum(int(w * 0.5) for w in words)
    assert "sglang:cached_tokens_total" in hit.definition
    assert view.running.max == 4 and view.kv_cache_usage.max == 1.0
    assert view.ttft_ms.n == view.e2el_ms.n == 12
    assert view.ttft_ms.quantiles["p50"].bucket_lower_ms == 100  # every TTFT 150 ms (+): bucket (100, 250]
    assert "sglang:time_to_first_token_seconds" in view.ttft_ms.definition
    assert "SGLang" in view.source and view.source != SOURCE
    assert view.preemptions == NotMeasured(
        reason="not measured: SGLang offers no preemption counter on /metrics"
    )


def test_tgi_has_queue_batch_and_e2el_only():
    view = _view("tgi")
    assert view.running.max == 4 and view.waiting.max == 0
    assert view.e2el_ms.n == 12 and "tgi_request_duration" in view.e2el_ms.definition
    for figure, noun in (
        (view.ttft_ms, "server-side TTFT histogram"),
        (view.kv_cache_usage, "KV-cache usage gauge"),
        (view.prefix_cache_hit_rate, "prefix-cache token counters"),
    ):
        assert figure == NotMeasured(reason=f"not measured: TGI offers no {noun} on /metrics")
    assert view.client_overhead_ms.reason.startswith("no server TTFT (not measured: TGI offers no")


def test_llama_cpp_gauges():
    view = _view("llama.cpp")
    assert view.running.max == 4 and view.kv_cache_usage.max == 1.0
    assert "llamacpp:requests_processing" in view.running.definition
    assert isinstance(view.ttft_ms, NotMeasured) and "llama.cpp server offers no" in view.ttft_ms.reason


def test_vllm_page_keeps_its_words():
    view = _view("vllm")
    assert view.source == SOURCE and view.running.definition == DEFINITIONS["running"]
    assert view.prefix_cache_hit_rate.definition == DEFINITIONS["prefix_cache_hit_rate"]


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        (b'sglang:num_queue_reqs{model_name="m"} 3\nsglang:num_queue_reqs{model_name="n"} 2\n', 5.0),
        (b"tgi_queue_size 7\n", 7.0),
        (b"llamacpp:requests_deferred 1\n", 1.0),
        (b'vllm:num_requests_waiting{engine="0"} 4\n', 4.0),
        (b"other_metric 1\n", None),
    ],
)
def test_interim_queue_by_engine(page, expected):
    assert waiting_total(page) == expected
