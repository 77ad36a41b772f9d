"""The scrape records: every `/metrics` page read during a load point, kept beside the factsheet (one JSON a
line, after the records header) so that `validate` can re-derive the server view from them."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import Field

from probes.core.measurement import Model
from probes.core.records_header import parse_record_line, split_header
from probes.server_view.page import Sample


class ScrapeRecord(Model):
    """One scrape: when it was read, the digest of the whole page, and the samples the server view reads
    (the families of probes.server_view.page; the rest of the page is not kept, its digest is)."""

    t_s: float = Field(description="seconds since the load point's time origin when the page had been read")
    page_sha256: str | None = Field(
        None, description="sha256 of the page's bytes; None when the scrape failed"
    )
    samples: list[Sample] = Field(default_factory=list)
    error: str | None = Field(
        None, description="why the scrape failed (timeout, HTTP status); None when read"
    )

    @property
    def ok(self) -> bool:
        return self.error is None


def scrapes_jsonl(scrapes: Iterable[ScrapeRecord]) -> bytes:
    return b"".join(s.model_dump_json().encode() + b"\n" for s in scrapes)


def load_scrapes(data: bytes) -> list[ScrapeRecord]:
    _, lines = split_header(data)
    return [ScrapeRecord.model_validate(parse_record_line(line)) for line in lines]
