"""The build spec's optional `governance:` section: the author's statements a governance form asks for (release
dates, base model and adapters, modalities and maximum input sizes, distribution channels, acceptable-use policy,
known limitations, standards claimed, a decision threshold per headline figure). The factsheet carries the
section as written (`factsheet.governance`), so its one model lives with the factsheet's."""

from __future__ import annotations

from factsheet.document.governance import DecisionThreshold, Governance, Modality

GovernanceSpec = Governance  # validated here, copied unchanged into the factsheet

__all__ = ["DecisionThreshold", "GovernanceSpec", "Modality"]
