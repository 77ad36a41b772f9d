"""Token accounting without the server's usage (issue 40 item 3): the workload's tokenizer gives the exact
prompt counts (never 0 stated as a figure), output tokens name their source, and the point records the model
id every request named and the output length the requests asked for."""

import asyncio

from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.targets.mock_server import MockServerConfig, running


def _run(tokenizer: str | None, **server):
    cfg = MockServerConfig(ttft_ms=5, itl_ms=1, stream_usage="never", send_done=False, **server)
    point = LoadPoint.at(concurrency=2, num_requests=6, input_len=12, output_len=8)
    with running(cfg) as url:
        return asyncio.run(run_point(url, cfg.model, point, SLO(e2el_ms=10_000), tokenizer_path=tokenizer))


def test_the_tokenizer_counts_what_the_server_did_not(tokenizer_json):
    r = _run(tokenizer_json)
    m = r.metrics
    assert m.completed == 6 and m.output_tokens_sources == {"tokenizer": 6}
    assert m.total_input_tokens == 6 * 12  # the synthetic prompts are trimmed to 12 tokens by this tokenizer
    assert {x.prompt_tokens_source for x in r.records} == {"tokenizer"}
    assert r.model == "mock-model" and r.workload.spec.output_len == 8


def test_without_a_tokenizer_nothing_is_stated_as_counted():
    r = _run(None)
    assert r.metrics.total_input_tokens is None and r.metrics.total_token_throughput is None
    assert r.metrics.output_tokens_sources == {"chunks": 6} and r.metrics.total_output_tokens == 48
    assert r.workload.spec.output_len == 8
