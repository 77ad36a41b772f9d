"""What governance forms ask of a deployment that a measurement cannot give: the author's own statements
(spec `governance:`, copied into the factsheet as written, schema >= 1.10.0). Every field is optional and shown
as declared: the tool checks its shape, never its truth.

The forms (docs/formats.md, "Governance fields"): the EU GPAI Model Documentation Form (release dates, model
dependencies, modalities with maximum input sizes, distribution channels, acceptable-use policy), SPDX 3
AIPackage (`limitation`, `metricDecisionThreshold`, `standardCompliance`), CycloneDX modelCard considerations.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Literal

from pydantic import Field, field_validator

from probes.core.measurement import Count, Model

# The headline figures a decision threshold may name (factsheet.document.headline_model.Figure.id).
FIGURE_ID = re.compile(
    r"^(capacity_at_slo(\.[A-Za-z0-9_-]+)?|e2el_ms\.p99|ttft_ms\.p99|tpot_ms\.p99|goodput|slo_attainment|"
    r"pass_at_1|energy_wh_per_1000_requests)$"
)
_TEXT = 2000  # characters: a statement, not a document (link to the document instead)


class Modality(Model):
    """One modality the model takes or gives, with its largest size (GPAI form: modalities and maximum input
    sizes)."""

    modality: Literal["text", "code", "image", "audio", "video"]
    direction: Literal["input", "output"]
    max_size: Count | None = Field(None, ge=1, description="the largest input or output accepted, in `unit`")
    unit: str | None = Field(None, max_length=40, description="e.g. tokens, pixels, seconds")


class DecisionThreshold(Model):
    """The value of a headline figure the author decides by (SPDX `metricDecisionThreshold`): e.g. capacity_at_slo
    `>= 16 users`. Stated beside the measured figure; the tool does not judge it (policies do)."""

    figure: str = Field(
        description="a headline figure id: capacity_at_slo[.<profile>], e2el_ms.p99, goodput, ..."
    )
    threshold: str = Field(min_length=1, max_length=200, description="the threshold in the author's words")

    @field_validator("figure")
    @classmethod
    def _known(cls, v: str) -> str:
        if not FIGURE_ID.match(v):
            raise ValueError(
                f"{v!r} is not a headline figure id (e.g. capacity_at_slo, e2el_ms.p99, pass_at_1)"
            )
        return v


class Governance(Model):
    """The author's governance statements (every field optional, each shown as declared)."""

    release_date: date | None = Field(None, description="when the model was first released (ISO date)")
    eu_release_date: date | None = Field(None, description="when it was placed on the EU market (ISO date)")
    base_model: str | None = Field(
        None, max_length=300, description="the model it was fine-tuned or derived from"
    )
    adapters: list[str] = Field(
        default_factory=list, max_length=50, description="adapters or fine-tunes applied"
    )
    modalities: list[Modality] = Field(default_factory=list, max_length=20)
    distribution_channels: list[str] = Field(
        default_factory=list, max_length=20, description="how it is made available (API, download, ...)"
    )
    acceptable_use_policy: str | None = Field(
        None, max_length=_TEXT, description="its text, or where to read it"
    )
    known_limitations: list[str] = Field(default_factory=list, max_length=50)
    standards: list[str] = Field(
        default_factory=list, max_length=50, description="standards the author claims compliance with"
    )
    decision_thresholds: list[DecisionThreshold] = Field(default_factory=list, max_length=50)

    @field_validator("adapters", "distribution_channels", "known_limitations", "standards")
    @classmethod
    def _short(cls, v: list[str]) -> list[str]:
        for item in v:
            if not item.strip() or len(item) > _TEXT:
                raise ValueError(f"each entry must be non-empty text of at most {_TEXT} characters")
        return v
