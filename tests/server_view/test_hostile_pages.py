"""A /metrics page is hostile input (issue 30): bounded in bytes, read time and series; NaN or ±Inf, a broken,
endless or slow page makes the server view *not measured* with the reason while the load figures stand, and
the factsheet written passes its own validate; control characters from a page are shown escaped."""

from __future__ import annotations

import json
import socket
import threading
import time
import tracemalloc

import httpx
import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.core.measurement import NotMeasured
from probes.core.untrusted.limits import MAX_METRICS_PAGE_BYTES, MAX_METRICS_SERIES
from probes.server_view.page import PageError, PageUnusable, parse_page
from probes.server_view.scraper import PageUnread, Scraper, check_endpoint, fetch_page
from probes.targets.mock_server import MockServerConfig, running
from tests.support import mock_spec

runner = CliRunner()
GAUGE = '# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{{engine="0"}} {v}\n'
HIST = (
    "# TYPE vllm:time_to_first_token_seconds histogram\n"
    'vllm:time_to_first_token_seconds_bucket{{le="0.1"}} 3.0\n'
    'vllm:time_to_first_token_seconds_bucket{{le="+Inf"}} 4.0\n'
    "vllm:time_to_first_token_seconds_count {v}\n"
    "vllm:time_to_first_token_seconds_sum 0.3\n"
)


@pytest.mark.parametrize(
    ("page", "needle"),
    [
        (GAUGE.format(v="NaN"), "vllm:num_requests_waiting is nan"),
        (HIST.format(v="+Inf"), "vllm:time_to_first_token_seconds_count is inf"),
        (HIST.format(v="NaN"), "vllm:time_to_first_token_seconds_count is nan"),
    ],
)
def test_a_value_that_is_not_finite_makes_the_page_unusable(page, needle):
    with pytest.raises(PageUnusable, match=needle):
        parse_page(page)
    assert parse_page(GAUGE.format(v="3"))[0].value == 3.0  # honest values read as before


def test_a_page_of_a_million_series_is_refused_fast():
    page = "".join(f'vllm:num_requests_waiting{{i="{i}"}} 1\n' for i in range(MAX_METRICS_SERIES + 1))
    t = time.perf_counter()
    with pytest.raises(PageUnusable, match=f"{MAX_METRICS_SERIES + 1:,} series on one page, over the limit"):
        parse_page(page)
    assert time.perf_counter() - t < 1.0


def test_control_characters_from_a_page_are_shown_escaped():
    with pytest.raises(PageError) as err:
        parse_page("\x1b[2J\x1b]0;owned\x07 \u202e<html>")
    text = str(err.value)
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    # the one escaping rule of every layer (probes/core/untrusted/text.py): shown as code points
    assert "<U+001B>[2J" in text and "<U+202E>" in text and "<U+0007>" in text


class _Raw:
    """A server that answers every connection with `head` and then `body()`'s chunks, `gap` s apart."""

    def __init__(self, chunks, gap: float = 0.0):
        self.chunks, self.gap = chunks, gap
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn):
        try:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
            for chunk in self.chunks():
                conn.sendall(chunk)
                if self.gap:
                    time.sleep(self.gap)
        except OSError:
            pass
        finally:
            conn.close()


def _endless():
    line = b'vllm:num_requests_waiting{engine="0"} 1\n' * 1000
    while True:
        yield line


def test_an_endless_page_is_cut_at_the_byte_limit_in_bounded_memory():
    server = _Raw(_endless)
    tracemalloc.start()
    with (
        httpx.Client(timeout=5) as client,
        pytest.raises(PageUnread, match="over the limit of 4,194,304 bytes"),
    ):
        fetch_page(client, server.url + "/metrics")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4 * MAX_METRICS_PAGE_BYTES


def test_a_page_at_a_trickle_is_cut_at_the_read_deadline():
    server = _Raw(lambda: iter([b"v"] * 100_000), gap=0.05)
    t = time.perf_counter()
    with httpx.Client(timeout=5) as client, pytest.raises(PageUnread, match="not read within 0.5 s"):
        fetch_page(client, server.url + "/metrics", read_s=0.5)
    assert time.perf_counter() - t < 2.0


def test_a_slow_page_in_a_run_is_a_failed_scrape_with_its_reason():
    server = _Raw(lambda: iter([b"v"] * 100_000), gap=0.05)
    scraper = Scraper(server.url, {}, interval_s=0.2)  # the read deadline of a scrape: max(interval, 1 s)
    scraper.start(time.perf_counter())
    records = scraper.stop()
    assert records and all(not r.ok and "not read within 1 s" in r.error for r in records)


def test_check_endpoint_on_a_nan_page_is_not_measured_not_an_error():
    with running(MockServerConfig(metrics_text=GAUGE.format(v="NaN"))) as url:
        seen = check_endpoint(url)
    assert isinstance(seen, NotMeasured) and "vllm:num_requests_waiting is nan" in seen.reason


def _build(tmp_path, url):
    spec = mock_spec.endpoint_spec(tmp_path, url, "  server_view: {interval_s: 0.1}\n", ((2, 8),))
    return runner.invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])


@pytest.mark.slow  # a whole build (~15 s on a shared host)
@pytest.mark.parametrize("page", [GAUGE.format(v="NaN"), HIST.format(v="+Inf")])
def test_a_build_against_a_nan_page_keeps_its_load_figures_and_validates(tmp_path, page):
    with running(MockServerConfig(model="mock-model", ttft_ms=10, itl_ms=1, metrics_text=page)) as url:
        result = _build(tmp_path, url)
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "out" / "factsheet.json").read_text())
    point = doc["load"]["points"][0]["result"]
    assert "not a finite number" in point["server_view"]["reason"]
    assert point["metrics"]["completed"] == 8  # the load figures stand
    check = runner.invoke(app, ["validate", str(tmp_path / "out" / "factsheet.json")])
    assert check.exit_code == 0, check.output


@pytest.mark.slow
def test_a_build_against_a_page_with_escapes_shows_them_escaped(tmp_path):
    page = "\x1b[2J\x1b]0;owned\x07<html>proxy</html>"
    with running(MockServerConfig(model="mock-model", ttft_ms=10, itl_ms=1, metrics_text=page)) as url:
        result = _build(tmp_path, url)
    assert result.exit_code == 2, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "not Prometheus text" in result.output


def test_the_tuners_counter_read_is_bounded_too():
    from tuner.calibration import CalibrationError
    from tuner.speculation import read_spec_decode_counters

    with pytest.raises(CalibrationError, match="over the limit of 4,194,304 bytes"):
        read_spec_decode_counters(_Raw(_endless).url)
    page = "".join(
        f"vllm:spec_decode_num_{k}_total 4\n" for k in ("drafts", "draft_tokens", "accepted_tokens")
    )
    with running(MockServerConfig(metrics_text=page)) as url:
        assert read_spec_decode_counters(url).num_drafts == 4.0
