"""Scraping `/metrics` while a load point runs: a background thread on an absolute schedule.

Why a thread with its own HTTP client: the load client's event loop stamps send and response times; a page
of tens of kilobytes fetched and parsed on that loop would delay those stamps (send lag, TTFT). The thread
only fetches (the socket waits release the interpreter); pages are parsed once the run is over.
The first scrape (the counters' baseline) is taken when the scraper is made, before the run's clock starts,
so that the client's and the page's set-up costs never delay the first send; the last after the last response.
Counters' increases cover the whole run.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

import httpx

from probes.core.digests import sha256_bytes
from probes.core.measurement import NotMeasured
from probes.core.untrusted.limits import MAX_METRICS_HELD_BYTES, MAX_METRICS_PAGE_BYTES, MAX_METRICS_READ_S
from probes.core.untrusted.text import printable
from probes.server_view.page import ALIASES, WAITING, PageError, parse_page
from probes.server_view.records import ScrapeRecord

NO_ENDPOINT = "no /metrics endpoint"
TIMEOUT_S = 5.0


class PageUnread(Exception):
    """A page not read whole within its limits (too large, too slow): that scrape failed, the run goes on."""


def fetch_page(client: httpx.Client, url: str, read_s: float = MAX_METRICS_READ_S) -> tuple[int, bytes]:
    """(HTTP status, body) of one GET, the body streamed and held to MAX_METRICS_PAGE_BYTES and the whole
    read to `read_s` (httpx's timeout bounds each wait, not the total: a page at 1 byte/s never times out).
    PageUnread naming the limit otherwise; httpx.HTTPError as httpx raises it."""
    began = time.perf_counter()
    with client.stream("GET", url) as resp:
        body = bytearray()
        for chunk in resp.iter_bytes():
            body += chunk
            if len(body) > MAX_METRICS_PAGE_BYTES:
                raise PageUnread(f"page over the limit of {MAX_METRICS_PAGE_BYTES:,} bytes")
            if time.perf_counter() - began > read_s:
                raise PageUnread(f"page not read within {read_s:g} s (the limit of one scrape)")
        return resp.status_code, bytes(body)


def metrics_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/metrics"


def check_endpoint(base_url: str, headers: dict[str, str] | None = None) -> NotMeasured | None:
    """None when the target serves Prometheus text on /metrics; NotMeasured when it has no such endpoint
    (HTTP 404, or another status, or no answer: named); PageError (exit 2) when the page is no Prometheus text."""
    url = metrics_url(base_url)
    try:
        with httpx.Client(headers=headers or {}, timeout=TIMEOUT_S) as client:
            status, body = fetch_page(client, url)
    except httpx.HTTPError as exc:
        return NotMeasured(reason=f"{NO_ENDPOINT} ({type(exc).__name__} on GET {url})")
    except PageUnread as exc:
        return NotMeasured(reason=f"/metrics not read: {exc}")
    if status == 404:
        return NotMeasured(reason=NO_ENDPOINT)
    if status != 200:
        return NotMeasured(reason=f"{NO_ENDPOINT} (GET {url} answered HTTP {status})")
    try:
        parse_page(body.decode("utf-8", "replace"), url)
    except PageError as exc:
        if exc.measured_elsewhere:  # Prometheus text, but values or a size no figure can rest on
            return NotMeasured(reason=str(exc))
        raise
    return None


class Scraper:
    """Reads `/metrics` every `interval_s` (on k × interval after start, so lateness never accumulates) until
    `stop()`. Made before the run's clock starts (the baseline scrape), started with the run's time origin.

    The thread only fetches: pages are parsed with prometheus-client's parser after the run (`stop()`), since
    parsing a vLLM page in pure Python takes long enough to hold the interpreter away from the load client's
    event loop. For the interim saturation check `on_scrape(points)` gets (t_s, waiting) of each page so far,
    the waiting gauge read by `waiting_total`, a scan for that one sample's lines."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        interval_s: float,
        on_scrape: Callable[[list[tuple[float, float]]], None] | None = None,
    ):
        self.url, self.interval_s = metrics_url(base_url), interval_s
        self.on_scrape = on_scrape
        self._pages: list[tuple[float, int | None, bytes | str]] = []  # (t, HTTP status, body or error)
        self._waiting: list[tuple[float, float]] = []
        self._held = 0  # page bytes held until stop()
        self._read_s = min(MAX_METRICS_READ_S, max(interval_s, 1.0))  # a slow page never holds up the run
        self._client = httpx.Client(headers=headers, timeout=min(TIMEOUT_S, max(interval_s, 1.0)))
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="metrics-scraper", daemon=True)
        self.t0 = time.perf_counter()
        self._fetch()  # the counters' baseline (its t_s < 0 once the run's origin is set)

    def start(self, t0: float) -> Scraper:
        shift = self.t0 - t0
        self._pages = [(t + shift, status, body) for t, status, body in self._pages]
        self.t0 = t0
        self._thread.start()
        return self

    def stop(self) -> list[ScrapeRecord]:
        """The final scrape, then every page parsed into its record."""
        self._done.set()
        self._thread.join()
        self._fetch()
        self._client.close()
        return [self._record(*page) for page in self._pages]

    def _fetch(self) -> None:
        try:
            status, body = fetch_page(self._client, self.url, self._read_s)
            self._held += len(body)
            if self._held > MAX_METRICS_HELD_BYTES:
                raise PageUnread(f"pages of this run over the limit of {MAX_METRICS_HELD_BYTES:,} bytes held")
            self._pages.append((time.perf_counter() - self.t0, status, body))
        except httpx.HTTPError as exc:  # counted as a failed scrape; the run goes on
            self._pages.append(
                (time.perf_counter() - self.t0, None, printable(f"{type(exc).__name__}: {exc}"))
            )
        except PageUnread as exc:
            self._pages.append((time.perf_counter() - self.t0, None, str(exc)))

    def _record(self, t: float, status: int | None, body: bytes | str) -> ScrapeRecord:
        if status is None:
            return ScrapeRecord(t_s=t, error=str(body))
        if status != 200:
            return ScrapeRecord(t_s=t, error=f"HTTP {status}")
        try:
            samples = parse_page(body.decode("utf-8", "replace"), self.url)
        except PageError as exc:  # a page gone bad mid-run: that scrape failed, the run's figures stand
            return ScrapeRecord(t_s=t, error=printable(str(exc)))
        return ScrapeRecord(t_s=t, page_sha256=sha256_bytes(body), samples=samples)

    def _loop(self) -> None:
        start, k = time.perf_counter(), 1
        while not self._done.wait(max(0.0, start + k * self.interval_s - time.perf_counter())):
            self._fetch()
            t, status, body = self._pages[-1]
            if self.on_scrape is not None and status == 200 and t >= 0:
                waiting = waiting_total(body)
                if waiting is not None:
                    self._waiting.append((t, waiting))
                    self.on_scrape(list(self._waiting))
            k = max(k + 1, int((time.perf_counter() - start) / self.interval_s) + 1)


def waiting_total(page: bytes) -> float | None:
    """The queue gauge (`vllm:num_requests_waiting`, or the page's engine's name for it: page.ALIASES) summed
    over its label sets, read from the page's lines without the full parser (the interim check only); None
    when the page has no such sample or it does not read as a number."""
    for name in ALIASES[WAITING]:
        found = _summed(page, name.encode())
        if found != ():
            return found
    return None


def _summed(page: bytes, name: bytes) -> float | None | tuple:
    """The sample `name` summed; () when the page has no line of it, None when a value is no finite number."""
    total, seen = 0.0, False
    for line in page.splitlines():
        if not line.startswith(name) or line[len(name) : len(name) + 1] not in (b"{", b" "):
            continue
        rest = line[line.rfind(b"}") + 1 :] if line[len(name) : len(name) + 1] == b"{" else line[len(name) :]
        try:
            value = float(rest.split()[0])
        except (ValueError, IndexError):
            return None
        if not math.isfinite(value):
            return None
        total += value
        seen = True
    return total if seen else ()
