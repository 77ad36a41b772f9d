"""The mock server's engine switches answer as each engine documents (probes/targets/mock_engines.py): the
known truth the engine adapters and the conformance preflight are tested against."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from probes.targets.mock_server import MockServerConfig, Received, running


def _stream(url: str, max_tokens: int = 4, **extra) -> list[str]:
    body = {"model": "mock-model", "prompt": "a b c", "max_tokens": max_tokens, "stream": True, **extra}
    with httpx.stream("POST", url + "/v1/completions", json=body, timeout=10) as resp:
        return [line for line in resp.iter_lines() if line.startswith("data:")]


def _payloads(lines: list[str]) -> list[dict]:
    return [json.loads(line[5:]) for line in lines if line.strip() != "data: [DONE]"]


def test_vllm_default_ends_with_done_finish_and_asked_usage():
    with running(MockServerConfig(ttft_ms=0, itl_ms=0)) as url:
        plain = _stream(url)
        asked = _stream(url, stream_options={"include_usage": True})
    assert plain[-1] == "data: [DONE]" and not any("usage" in p for p in _payloads(plain))
    assert _payloads(plain)[-1]["choices"][0]["finish_reason"] == "length"
    assert _payloads(asked)[-1]["usage"]["completion_tokens"] == 4


def test_transformers_serve_sends_no_done():
    with running(MockServerConfig(engine="transformers-serve", ttft_ms=0, itl_ms=0)) as url:
        lines = _stream(url)
        listing = httpx.get(url + "/v1/models").json()
        headers = httpx.get(url + "/health").headers
    assert "[DONE]" not in lines[-1] and _payloads(lines)[-1]["usage"]["completion_tokens"] == 4
    assert listing == {"object": "list", "data": []}  # a local folder is not listed
    assert headers["x-request-id"] and headers["server"] == "uvicorn"


def test_llama_cpp_python_cuts_a_running_stream_on_a_new_request():
    cfg = MockServerConfig(engine="llama-cpp-python", ttft_ms=0, itl_ms=20)
    seen: list[Received] = []
    with running(cfg, recorder=seen) as url:
        first: list[list[str]] = []
        thread = threading.Thread(target=lambda: first.append(_stream(url, max_tokens=20)))
        thread.start()
        while not seen:  # the first has arrived: the second comes while it streams (20 tokens, 400 ms)
            time.sleep(0.005)
        second = _stream(url, max_tokens=3)
        thread.join()
        listing = httpx.get(url + "/v1/models").json()
    cut = _payloads(first[0])
    assert first[0][-1] == "data: [DONE]" and len(cut) < 20
    assert not any(c["choices"][0].get("finish_reason") for c in cut if c["choices"])
    assert len(_payloads(second)) == 3
    assert listing["data"][0]["owned_by"] == "me"


def test_switches_bare_list_plain_json_eos_and_prompt_count():
    cfg = MockServerConfig(
        ttft_ms=0,
        itl_ms=0,
        models_listing="bare_list",
        eos_after=2,
        honours_ignore_eos=False,
        prompt_tokens_extra=5,
    )
    with running(cfg) as url:
        assert httpx.get(url + "/v1/models").json() == [
            {"id": "mock-model", "object": "model", "owned_by": "vllm"}
        ]
        short = _payloads(_stream(url, 6, ignore_eos=True, stream_options={"include_usage": True}))
    assert short[-1]["usage"] == {"prompt_tokens": 8, "completion_tokens": 2, "total_tokens": 10}
    assert short[-2]["choices"][0]["finish_reason"] == "stop"
    with running(MockServerConfig(ttft_ms=0, itl_ms=0, ignores_stream=True)) as url:
        resp = httpx.post(
            url + "/v1/completions", json={"model": "m", "prompt": "x", "max_tokens": 3, "stream": True}
        )
    assert (
        resp.headers["content-type"].startswith("application/json")
        and resp.json()["usage"]["completion_tokens"] == 3
    )


@pytest.mark.parametrize(
    ("engine", "path", "key", "value"),
    [
        ("vllm", "/version", "version", "0.32.0"),
        ("sglang", "/get_server_info", "version", "0.5.4"),
        ("tgi", "/info", "model_id", "mock-model"),
        ("llama.cpp", "/props", "total_slots", 1024),
        ("ollama", "/api/version", "version", "0.12.6"),
    ],
)
def test_identity_endpoints(engine, path, key, value):
    with running(MockServerConfig(engine=engine)) as url:
        assert httpx.get(url + path).json()[key] == value
