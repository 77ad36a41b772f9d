"""The server view against the mock server, whose /metrics values are known from what it did: prompt words
looked up and a stated fraction found cached, a preemption every k-th request, every TTFT in one histogram
bucket, a queue that grows without bound above capacity."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.core.measurement import NotMeasured
from probes.load import SLO, LoadPoint, run_point
from probes.load.capacity import judge_point
from probes.load.workloads.workload import synthetic_prompts
from probes.server_view import ServerView, ServerViewSpec
from probes.targets.mock_server import MockServerConfig, running

pytestmark = pytest.mark.system

SLO_ = SLO(ttft_ms=1000, e2el_ms=2000)


def _run(url: str, point: LoadPoint, view: ServerViewSpec | None):
    return asyncio.run(run_point(url, "mock-model", point, SLO_, server_view=view))


def test_known_server_figures():
    """16 requests, 4 users, 4 slots: nothing queues, so every server TTFT is 150 ms (+ the event loop's
    delay) in vLLM's bucket (100, 250] ms and every E2EL 150 + 15 × 10 = 300 ms (+) in (300, 500] ms; all in
    one bucket, the interpolated quantiles are exact: lower + width × q."""
    cfg = MockServerConfig(
        ttft_ms=150, itl_ms=10, slots=4, metrics=True, prefix_hit_fraction=0.3, preempt_every=5
    )
    point = LoadPoint.at(concurrency=4, num_requests=16, input_len=24, output_len=16)
    with running(cfg) as url:
        result = _run(url, point, ServerViewSpec(interval_s=0.1))
    view = result.server_view
    assert isinstance(view, ServerView)
    prompts, _ = synthetic_prompts(16, 24, 0)
    words = [len(p.split()) for p in prompts]
    hit = view.prefix_cache_hit_rate
    assert hit.queries == sum(words) and hit.hits == sum(int(w * 0.3) for w in words)
    assert hit.value == pytest.approx(sum(int(w * 0.3) for w in words) / sum(words))
    assert view.preemptions.value == 3  # requests 5, 10, 15
    assert view.running.max == 4 and view.waiting.max == 0 and view.kv_cache_usage.max == 1.0
    assert view.scrapes >= 3 and view.failed_scrapes == 0
    ttft, e2el = view.ttft_ms, view.e2el_ms
    assert ttft.n == e2el.n == 16
    assert {k: q.estimate_ms for k, q in ttft.quantiles.items()} == pytest.approx(
        {"p50": 175, "p90": 235, "p99": 248.5}
    )
    assert {k: q.estimate_ms for k, q in e2el.quantiles.items()} == pytest.approx(
        {"p50": 400, "p90": 480, "p99": 498}
    )
    over = view.client_overhead_ms
    client = result.metrics.ttft_ms.p(50)
    assert over.client_ttft_p50_ms == client and over.difference_ms == pytest.approx(client - 175)
    assert over.range_ms == pytest.approx((client - 250, client - 100))
    assert not result.saturation.over_saturated and result.stop_reason == "count"


def test_series_covers_the_run_and_scrapes_are_kept():
    cfg = MockServerConfig(ttft_ms=100, itl_ms=10, slots=2, metrics=True)
    with running(cfg) as url:
        result = _run(
            url, LoadPoint.at(concurrency=4, num_requests=12, output_len=8), ServerViewSpec(interval_s=0.1)
        )
    series = result.server_view.series
    assert series[0].t_s < 0 < series[-1].t_s  # baseline before the clock, the last after the last response
    assert [s.t_s for s in series] == sorted(s.t_s for s in series)
    assert max(s.running for s in series) == 2 and max(s.waiting for s in series) == 2  # 4 users, 2 slots
    assert len(result.scrapes) == result.server_view.scrapes
    assert all(s.page_sha256.startswith("sha256:") for s in result.scrapes)


def test_no_metrics_endpoint_is_not_measured():
    with running(MockServerConfig(ttft_ms=20, itl_ms=2)) as url:
        result = _run(url, LoadPoint.at(concurrency=2, num_requests=8, output_len=4), ServerViewSpec())
    assert result.server_view == NotMeasured(reason="no /metrics endpoint")
    assert result.saturation is not None and [t.unit for t in result.saturation.tests] == ["ms"]  # TTFT only
    assert result.metrics.completed == 8


def test_over_capacity_open_loop_stops_when_saturated():
    """One slot, 100 + 3 × 10 ms a request: capacity ≈ 7.7 req/s. At 25 req/s the queue grows ≈ 17 a second;
    with stop_when_saturated the point stops long before its 200 requests and says why."""
    cfg = MockServerConfig(ttft_ms=100, itl_ms=10, slots=1, metrics=True)
    point = LoadPoint.at(rate=25, burstiness=float("inf"), num_requests=200, output_len=4)
    with running(cfg) as url:
        result = _run(url, point, ServerViewSpec(interval_s=0.1, stop_when_saturated=True))
    assert result.stop_reason == "saturated" and "waiting queue grew" in result.aborted
    assert result.sent < 100 and result.not_sent == 200 - result.sent
    assert result.saturation.over_saturated and all(t.grows for t in result.saturation.tests)
    verdict = judge_point(25, result, None)
    assert not verdict.passed and any("over-saturated" in r for r in verdict.reasons)
    assert verdict.stopped_early == result.aborted


def test_below_capacity_open_loop_is_not_saturated():
    cfg = MockServerConfig(ttft_ms=50, itl_ms=5, slots=8, metrics=True)
    point = LoadPoint.at(rate=10, num_requests=30, output_len=4)
    with running(cfg) as url:
        result = _run(url, point, ServerViewSpec(interval_s=0.1, stop_when_saturated=True))
    assert result.stop_reason == "count" and result.sent == 30
    assert not result.saturation.over_saturated


BAD_PAGES = [
    ("<html><body>login</body></html>\n", "invalid metric name"),
    ('{"status": "ok"}\n', "Invalid labels"),
    ("everything is fine\n", "could not convert"),
]


@pytest.mark.parametrize(("page", "cause"), BAD_PAGES)
def test_probe_load_refuses_a_page_that_is_not_prometheus_text(tmp_path, page, cause):
    out = tmp_path / "out"
    with running(MockServerConfig(ttft_ms=10, itl_ms=1, metrics_text=page)) as url:
        args = ["probe", "load", "--base-url", url, "--model", "mock-model", "--concurrency", "1"]
        result = CliRunner().invoke(app, [*args, "--num-prompts", "2", "-o", str(out)])
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert "\n" not in line and "/metrics: not Prometheus text" in line and cause in line
    assert not out.exists()


def test_probe_load_writes_its_scrapes(tmp_path):
    out = tmp_path / "out"
    with running(MockServerConfig(ttft_ms=20, itl_ms=2, metrics=True)) as url:
        args = ["probe", "load", "--base-url", url, "--model", "mock-model", "--concurrency", "2"]
        result = CliRunner().invoke(
            app, [*args, "--num-prompts", "8", "--scrape-interval", "0.1", "-o", str(out)]
        )
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "result.json").read_text())
    assert doc["server_view"]["running"]["max"] <= 2 and doc["scrapes_file"] == "scrapes.jsonl"
    assert (out / "scrapes.jsonl").read_bytes().count(b"\n") == doc["server_view"]["scrapes"]
    assert "server view:" in result.output
