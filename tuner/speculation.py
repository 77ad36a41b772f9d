"""vLLM's speculative-decoding counters, read from its Prometheus `/metrics` text."""

from __future__ import annotations

import httpx
from pydantic import Field

from probes.core.measurement import Model
from probes.server_view import PageError, PageUnread, fetch_page, parse_page
from tuner.calibration import CalibrationError, acceptance_rate

DRAFTS = "vllm:spec_decode_num_drafts_total"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens_total"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"


class SpecDecodeCounters(Model):
    """Cumulative counters since the server started, summed over engines and label sets."""

    num_drafts: float = Field(ge=0)
    num_draft_tokens: float = Field(ge=0)
    num_accepted_tokens: float = Field(ge=0)

    def acceptance_rate(self) -> float:
        return acceptance_rate(self.num_drafts, self.num_draft_tokens, self.num_accepted_tokens)


def parse_spec_decode_counters(text: str) -> SpecDecodeCounters | None:
    """The three counters from a `/metrics` page, or None when the server exports none of them
    (speculation off); a page with only some of them is an error."""
    totals: dict[str, float] = {}
    try:
        samples = parse_page(text, names=frozenset((DRAFTS, DRAFT_TOKENS, ACCEPTED)))
    except PageError as exc:
        raise CalibrationError(str(exc)) from None
    for sample in samples:
        totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
    if not totals:
        return None
    missing = {DRAFTS, DRAFT_TOKENS, ACCEPTED} - totals.keys()
    if missing:
        raise CalibrationError(f"/metrics lacks speculation counters: {', '.join(sorted(missing))}")
    return SpecDecodeCounters(
        num_drafts=totals[DRAFTS], num_draft_tokens=totals[DRAFT_TOKENS], num_accepted_tokens=totals[ACCEPTED]
    )


def read_spec_decode_counters(base_url: str, *, api_key: str | None = None) -> SpecDecodeCounters | None:
    """GET `{base_url}/metrics` and parse it; None when the server has no such counters."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:  # the page bounded in bytes and read time, as every /metrics read (probes.server_view)
        with httpx.Client(headers=headers, timeout=10) as client:
            status, body = fetch_page(client, base_url.rstrip("/") + "/metrics")
    except httpx.HTTPError as exc:
        raise CalibrationError(f"cannot read {base_url}/metrics: {type(exc).__name__}: {exc}") from exc
    except PageUnread as exc:
        raise CalibrationError(f"cannot read {base_url}/metrics: {exc}") from None
    if status != 200:
        raise CalibrationError(f"{base_url}/metrics answered HTTP {status}")
    return parse_spec_decode_counters(body.decode("utf-8", "replace"))
