"""Who wrote a document and when: this tool's installed version and the UTC time, as every document the tool
writes (a factsheet, a compliance report, a diff, a signature, a catalogue) states them. Here, below the build
and the readers, because both stamp what they write."""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import metadata


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def tool_version() -> str:
    try:
        return metadata.version("llm-factsheet")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"
