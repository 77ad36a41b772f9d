"""A raw-records file a factsheet names: its own module, so that the sections the schema imports (the
predictor's) can name one too without importing the schema."""

from __future__ import annotations

from pydantic import Field

from probes.core.measurement import Model


class RecordsFile(Model):
    path: str = Field(description="relative to the factsheet")
    sha256: str = Field(description="of the whole file, its header line included")
    records: int = Field(description="records in the file (schema >= 1.2.0: after its header line)")
