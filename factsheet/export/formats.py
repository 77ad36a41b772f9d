"""The formats `factsheet export` writes, apart from their writers: the command line names them in its
help without loading the exporters (see factsheet.api.documents)."""

from __future__ import annotations

from enum import StrEnum


class ExportFormat(StrEnum):
    """A model registry's format: Hugging Face model card, CycloneDX 1.6 BOM, SPDX 3.0.1; or the coverage
    of the EU GPAI documentation items (gpai-coverage.json)."""

    hf = "hf"
    cyclonedx = "cyclonedx"
    spdx = "spdx"
    gpai_coverage = "gpai-coverage"
