"""The server view of one load point, from its scrape records: what the server itself says it did.

Counters and histograms are cumulative since the server started, so the run's share is the increase from the
first scrape (taken before the first send) to the last (taken after the last response). Gauges are sampled:
their mean and max are over the scrapes taken while requests were in flight (first send to last response).
Every sample is summed over its label sets (engines, model names), histogram buckets per bound.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from pydantic import Field

from probes.core.measurement import Model, NotMeasured
from probes.server_view import page
from probes.server_view.histogram import HistogramQuantiles, histogram_quantiles
from probes.server_view.records import ScrapeRecord

PERCENTILES = (50.0, 90.0, 99.0)
SOURCE = "the target's Prometheus /metrics page (vLLM V1 metric names), parsed with prometheus-client"
FOREIGN_SOURCE = (
    "the target's Prometheus /metrics page ({engine}'s metric names, read as the server view's: "
    "docs/servers.md), parsed with prometheus-client"
)
DEFINITIONS = {
    "prefix_cache_hit_rate": "Δ vllm:prefix_cache_hits_total / Δ vllm:prefix_cache_queries_total over the run "
    "(prompt tokens found in the prefix cache / prompt tokens looked up)",
    "kv_cache_usage": "vllm:kv_cache_usage_perc (fraction of KV-cache blocks in use, 0–1) at each scrape while "
    "requests were in flight",
    "running": "vllm:num_requests_running at each scrape while requests were in flight",
    "waiting": "vllm:num_requests_waiting at each scrape while requests were in flight",
    "preemptions": "Δ vllm:num_preemptions_total over the run",
    "ttft_ms": "server TTFT: vllm:time_to_first_token_seconds, requests finished during the run",
    "e2el_ms": "server end-to-end latency: vllm:e2e_request_latency_seconds, requests finished during the run",
    "client_overhead_ms": "client TTFT p50 (steady window) − server TTFT p50 (histogram estimate): the client, "
    "the network and the HTTP front end before the engine sees the request",
}


class GaugeSummary(Model):
    unit: str
    definition: str
    n: int = Field(ge=0, description="scrapes the figures rest on")
    mean: float
    max: float


class CounterIncrease(Model):
    unit: str
    definition: str
    value: float = Field(ge=0)


class HitRate(Model):
    definition: str = DEFINITIONS["prefix_cache_hit_rate"]
    hits: float = Field(ge=0, description="tokens")
    queries: float = Field(ge=0, description="tokens")
    value: float | None = Field(description="hits / queries; None when nothing was looked up")
    ci: None = Field(None, description="no interval: the tokens of one prompt are not independent trials")


class ClientOverhead(Model):
    definition: str = DEFINITIONS["client_overhead_ms"]
    client_ttft_p50_ms: float
    server_ttft_p50_ms: float
    difference_ms: float
    range_ms: tuple[float | None, float] = Field(
        description="what the difference can be given the server estimate's bucket: (client − bucket upper, "
        "client − bucket lower); None: the bucket has no upper bound"
    )


class SeriesPoint(Model):
    """One scrape's gauges, for the chart of the run (t_s since the point's time origin)."""

    t_s: float
    kv_cache_usage: float | None
    running: float | None
    waiting: float | None


class ServerView(Model):
    source: str = SOURCE
    interval_s: float = Field(description="seconds between scrapes (absolute schedule)")
    scrapes: int = Field(description="pages read")
    failed_scrapes: int = Field(description="scrapes that returned no page (timeout, HTTP error)")
    prefix_cache_hit_rate: HitRate | NotMeasured
    kv_cache_usage: GaugeSummary | NotMeasured
    running: GaugeSummary | NotMeasured
    waiting: GaugeSummary | NotMeasured
    preemptions: CounterIncrease | NotMeasured
    ttft_ms: HistogramQuantiles | NotMeasured
    e2el_ms: HistogramQuantiles | NotMeasured
    client_overhead_ms: ClientOverhead | NotMeasured
    series: list[SeriesPoint] = Field(description="every scrape's gauges over the run")


def total(scrape: ScrapeRecord, name: str) -> float | None:
    """A sample summed over its label sets; None when the page has none. A family of the view's vocabulary
    (page.ALIASES) is read by the first of its engines' names the page holds."""
    for alias in page.ALIASES.get(name, (name,)) if name in page.ALIASES else (name,):
        values = [s.value for s in scrape.samples if s.name == alias]
        if values:
            return float(sum(values))
    return None


# What each figure is, in words, for "<engine> offers no ..." (by the vocabulary's family).
NOUNS = {
    page.RUNNING: "gauge of running requests",
    page.WAITING: "gauge of queued requests",
    page.KV_USAGE: "KV-cache usage gauge",
    page.PREFIX_QUERIES: "prefix-cache token counters",
    page.PREFIX_HITS: "prefix-cache token counters",
    page.PREEMPTIONS: "preemption counter",
    page.TTFT: "server-side TTFT histogram",
    page.E2EL: "server-side end-to-end latency histogram",
}
SUFFIX = {page.PREFIX_QUERIES: "_total", page.PREFIX_HITS: "_total", page.PREEMPTIONS: "_total"}


class Names:
    """The family each figure is read from on these pages (a run's pages come from one server): the first of
    its engines' names any page holds, else vLLM's; and whose names they are."""

    def __init__(self, scrapes: list[ScrapeRecord]):
        held = {s.name for scrape in scrapes for s in scrape.samples}
        self.engine = next((page.engine_of(n) for n in sorted(held) if page.engine_of(n)), None)
        self.family: dict[str, str] = {}
        for family, aliases in page.ALIASES.items():
            ends = ("_total",) if family in SUFFIX else ("", "_count")
            found = [a for a in aliases if any(a + end in held for end in ends)]
            self.family[family] = found[0] if found else family

    def foreign(self) -> bool:
        return self.engine not in (None, "vLLM")

    def lacks(self, family: str) -> bool:
        """The page's engine names no family for this figure at all."""
        engine = self.engine
        return self.foreign() and not any(page.engine_of(a) == engine for a in page.ALIASES[family])

    def __getitem__(self, family: str) -> str:
        return self.family[family]


def _offered(names: Names, family: str, figure):
    """A figure the page's engine offers no family for says so, by name, rather than "no vllm:... on /metrics"."""
    if isinstance(figure, NotMeasured) and names.lacks(family):
        return NotMeasured(reason=f"not measured: {names.engine} offers no {NOUNS[family]} on /metrics")
    return figure


def _definition(key: str, name: str) -> str:
    """vLLM's names keep their words; another engine's family is named in the same words."""
    if page.engine_of(name) in (None, "vLLM"):
        return DEFINITIONS[key]
    generic = {
        "kv_cache_usage": f"{name} (fraction of the KV cache in use, 0–1) at each scrape while requests were in "
        "flight",
        "running": f"{name} (requests being generated) at each scrape while requests were in flight",
        "waiting": f"{name} (requests queued) at each scrape while requests were in flight",
        "ttft_ms": f"server TTFT: {name}, requests finished during the run",
        "e2el_ms": f"server end-to-end latency: {name}, requests finished during the run",
    }
    return generic[key]


def _buckets(scrape: ScrapeRecord, family: str) -> dict[float, float]:
    """`family`: the name the page holds it by (Names)."""
    out: dict[float, float] = defaultdict(float)
    for s in scrape.samples:
        if s.name == family + "_bucket" and "le" in s.labels:
            out[float(s.labels["le"])] += s.value
    return out


def _increase(first: ScrapeRecord, last: ScrapeRecord, name: str) -> float | NotMeasured:
    a, b = total(first, name), total(last, name)
    if a is None or b is None:
        return NotMeasured(reason=f"no {name} on /metrics")
    if b < a:
        return NotMeasured(reason=f"{name} went down during the run (server restarted)")
    return b - a


def _gauge(scrapes: list[ScrapeRecord], name: str, key: str, unit: str) -> GaugeSummary | NotMeasured:
    values = [v for v in (total(s, name) for s in scrapes) if v is not None]
    if not values:
        why = f"no {name} on /metrics" if scrapes else "no scrape while requests were in flight"
        return NotMeasured(reason=why)
    return GaugeSummary(
        unit=unit,
        definition=_definition(key, name),
        n=len(values),
        mean=float(np.mean(values)),
        max=max(values),
    )


def _hit_rate(first: ScrapeRecord, last: ScrapeRecord, names: Names) -> HitRate | NotMeasured:
    hit_name, query_name = names[page.PREFIX_HITS] + "_total", names[page.PREFIX_QUERIES] + "_total"
    hits = _increase(first, last, hit_name)
    queries = _increase(first, last, query_name)
    for x in (hits, queries):
        if isinstance(x, NotMeasured):
            return _offered(names, page.PREFIX_HITS, x)
    words = (
        DEFINITIONS["prefix_cache_hit_rate"]
        if not names.foreign()
        else f"Δ {hit_name} / Δ {query_name} over the run (prompt tokens found in the prefix cache / prompt "
        "tokens processed)"
    )
    return HitRate(
        definition=words, hits=hits, queries=queries, value=hits / queries if queries > 0 else None
    )


def _histogram(
    first: ScrapeRecord, last: ScrapeRecord, family: str, key: str
) -> HistogramQuantiles | NotMeasured:
    before, after = _buckets(first, family), _buckets(last, family)
    count = _increase(first, last, family + "_count")
    if not after or isinstance(count, NotMeasured):
        return NotMeasured(reason=f"no {family} histogram on /metrics")
    if any(after[b] < before.get(b, 0.0) for b in after):
        return NotMeasured(reason=f"{family} went down during the run (server restarted)")
    buckets = sorted((b, after[b] - before.get(b, 0.0)) for b in after)
    if count == 0:
        return NotMeasured(reason=f"{family}: no request finished during the run")
    return histogram_quantiles(_definition(key, family), buckets, count, PERCENTILES)


def _overhead(
    ttft: HistogramQuantiles | NotMeasured, client_p50: float | None
) -> ClientOverhead | NotMeasured:
    if isinstance(ttft, NotMeasured):
        return NotMeasured(reason=f"no server TTFT ({ttft.reason})")
    q = ttft.quantiles.get("p50")
    if client_p50 is None:
        return NotMeasured(reason="no client TTFT p50: no request completed in the steady window")
    if q is None or q.estimate_ms is None:
        return NotMeasured(reason="the server's TTFT p50 lies in the +Inf bucket: no estimate")
    upper = None if q.bucket_upper_ms is None else client_p50 - q.bucket_upper_ms
    return ClientOverhead(
        client_ttft_p50_ms=client_p50,
        server_ttft_p50_ms=q.estimate_ms,
        difference_ms=client_p50 - q.estimate_ms,
        range_ms=(upper, client_p50 - q.bucket_lower_ms),
    )


def server_view(
    scrapes: list[ScrapeRecord],
    interval_s: float,
    in_flight: tuple[float, float] | None,
    client_ttft_p50_ms: float | None,
) -> ServerView | NotMeasured:
    """The figures of one point: `in_flight` = (first send, last response) in the records' time."""
    ok = [s for s in scrapes if s.ok]
    if len(ok) < 2:
        failed = next((s.error for s in reversed(scrapes) if not s.ok), None)
        why = f" (last failure: {failed})" if failed else ""
        return NotMeasured(reason=f"{len(ok)} /metrics page(s) read: a run's increase needs two{why}")
    first, last = ok[0], ok[-1]
    during = [s for s in ok if in_flight and in_flight[0] <= s.t_s <= in_flight[1]]
    names = Names(ok)
    ttft = _offered(names, page.TTFT, _histogram(first, last, names[page.TTFT], "ttft_ms"))
    preempted = _offered(names, page.PREEMPTIONS, _increase(first, last, names[page.PREEMPTIONS] + "_total"))
    return ServerView(
        source=SOURCE if not names.foreign() else FOREIGN_SOURCE.format(engine=names.engine),
        interval_s=interval_s,
        scrapes=len(ok),
        failed_scrapes=len(scrapes) - len(ok),
        prefix_cache_hit_rate=_hit_rate(first, last, names),
        **{
            key: _offered(names, family, _gauge(during, names[family], key, unit))
            for key, family, unit in (
                ("kv_cache_usage", page.KV_USAGE, "fraction"),
                ("running", page.RUNNING, "requests"),
                ("waiting", page.WAITING, "requests"),
            )
        },
        preemptions=preempted
        if isinstance(preempted, NotMeasured)
        else CounterIncrease(unit="preemptions", definition=DEFINITIONS["preemptions"], value=preempted),
        ttft_ms=ttft,
        e2el_ms=_offered(names, page.E2EL, _histogram(first, last, names[page.E2EL], "e2el_ms")),
        client_overhead_ms=_overhead(ttft, client_ttft_p50_ms),
        series=[
            SeriesPoint(
                t_s=s.t_s,
                kv_cache_usage=total(s, page.KV_USAGE),
                running=total(s, page.RUNNING),
                waiting=total(s, page.WAITING),
            )
            for s in ok
        ],
    )
