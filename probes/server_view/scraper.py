"""Scraping `/metrics` while a load point runs: a background thread on an absolute schedule.

Why a thread with its own HTTP client: the load client's event loop stamps send and response times; a page
of tens of kilobytes fetched and parsed on that loop would delay those stamps (send lag, TTFT). In a thread
the loop keeps running between the interpreter's switches (5 ms), and the scrape's own time is spent there.
The first scrape (the counters' baseline) is taken when the scraper is made, before the run's clock starts,
so that the client's and the page's set-up costs never delay the first send; the last after the last response.
Counters' increases cover the whole run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import httpx

from probes.core.digests import sha256_bytes
from probes.core.measurement import NotMeasured
from probes.server_view.page import PageError, parse_page
from probes.server_view.records import ScrapeRecord

NO_ENDPOINT = "no /metrics endpoint"
TIMEOUT_S = 5.0


def metrics_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/metrics"


def check_endpoint(base_url: str, headers: dict[str, str] | None = None) -> NotMeasured | None:
    """None when the target serves Prometheus text on /metrics; NotMeasured when it has no such endpoint
    (HTTP 404, or another status, or no answer: named); PageError (exit 2) when the page is no Prometheus text."""
    url = metrics_url(base_url)
    try:
        resp = httpx.get(url, headers=headers or {}, timeout=TIMEOUT_S)
    except httpx.HTTPError as exc:
        return NotMeasured(reason=f"{NO_ENDPOINT} ({type(exc).__name__} on GET {url})")
    if resp.status_code == 404:
        return NotMeasured(reason=NO_ENDPOINT)
    if resp.status_code != 200:
        return NotMeasured(reason=f"{NO_ENDPOINT} (GET {url} answered HTTP {resp.status_code})")
    parse_page(resp.text, url)
    return None


class Scraper:
    """Reads `/metrics` every `interval_s` (on k × interval after start, so lateness never accumulates) until
    `stop()`; `on_scrape(scrapes so far)` is called from the thread after each page (the saturation check).
    Made before the run's clock starts (the baseline scrape), started with the run's time origin `t0`."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        interval_s: float,
        on_scrape: Callable[[list[ScrapeRecord]], None] | None = None,
    ):
        self.url, self.interval_s = metrics_url(base_url), interval_s
        self.on_scrape = on_scrape
        self.scrapes: list[ScrapeRecord] = []
        self._client = httpx.Client(headers=headers, timeout=min(TIMEOUT_S, max(interval_s, 1.0)))
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="metrics-scraper", daemon=True)
        self.t0 = time.perf_counter()
        self.scrape()  # the counters' baseline (its t_s < 0 once the run's origin is set)

    def start(self, t0: float) -> Scraper:
        shift = self.t0 - t0
        self.scrapes = [s.model_copy(update={"t_s": s.t_s + shift}) for s in self.scrapes]
        self.t0 = t0
        self._thread.start()
        return self

    def stop(self) -> list[ScrapeRecord]:
        self._done.set()
        self._thread.join()
        self.scrape()  # after the last response: the counters' final value
        self._client.close()
        return self.scrapes

    def scrape(self) -> None:
        try:
            resp = self._client.get(self.url)
            t = time.perf_counter() - self.t0
            if resp.status_code != 200:
                rec = ScrapeRecord(t_s=t, error=f"HTTP {resp.status_code}")
            else:
                data = resp.content
                rec = ScrapeRecord(
                    t_s=t, page_sha256=sha256_bytes(data), samples=parse_page(resp.text, self.url)
                )
        except (httpx.HTTPError, PageError) as exc:  # counted as a failed scrape; the run goes on
            rec = ScrapeRecord(t_s=time.perf_counter() - self.t0, error=f"{type(exc).__name__}: {exc}"[:200])
        self.scrapes.append(rec)

    def _loop(self) -> None:
        start, k = time.perf_counter(), 1
        while not self._done.wait(max(0.0, start + k * self.interval_s - time.perf_counter())):
            self.scrape()
            if self.on_scrape is not None:
                self.on_scrape(list(self.scrapes))
            k = max(k + 1, int((time.perf_counter() - start) / self.interval_s) + 1)
