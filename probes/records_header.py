"""The first line of a raw-records file: which context (load point, capacity step, measurement) its records
belong to, as the sha256 of that context's canonical JSON (schema >= 1.2.0; older files have no header).

The header lives in the probes because every reader of a records file, probes included, must step over it;
what a context holds, and its digest, is the factsheet's business (factsheet/binding).
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field, ValidationError

from probes.measurement import Model

FORMAT = "llm-factsheet records"


class RecordsHeader(Model):
    format: Literal["llm-factsheet records"] = FORMAT
    role: str = Field(description="what the records belong to: 'load point', 'capacity step', ...")
    context_sha256: str = Field(description="sha256 of the canonical JSON of that context")


class HeaderLine(Model):
    """The header as written: one object with the single key `header`, which no record has."""

    header: RecordsHeader


def header_line(role: str, context_sha256: str) -> bytes:
    return (
        HeaderLine(header=RecordsHeader(role=role, context_sha256=context_sha256)).model_dump_json().encode()
        + b"\n"
    )


def split_header(data: bytes) -> tuple[RecordsHeader | None, list[bytes]]:
    """The header (None for a file written before schema 1.2.0) and the record lines after it.

    A first line shaped like a header but not a valid one raises ValueError: it is neither a header nor a
    record, and reading it as a record would hide the tampering."""
    lines = [line for line in data.splitlines() if line.strip()]
    if not lines:
        return None, []
    first = json.loads(lines[0])
    if not (isinstance(first, dict) and "header" in first):
        return None, lines
    try:
        return HeaderLine.model_validate(first).header, lines[1:]
    except ValidationError as exc:
        raise ValueError(f"malformed records header: {str(exc).splitlines()[0]}") from exc
