"""`validate`'s check of the headline: recomputed from the rest of the sheet, every stated field compared."""

from __future__ import annotations

from factsheet.document.headline.figures import headline
from factsheet.document.schema import Factsheet
from factsheet.rederive.compare import Discrepancy, differences


def headline_differences(sheet: Factsheet) -> list[Discrepancy]:
    """Each stated headline field that the rest of `sheet` does not give, named by its path and its figure's
    id; empty when the sheet states no headline (an older document) or states the computed one."""
    if sheet.headline is None:
        return []
    computed = headline(sheet)
    stated = sheet.headline
    if [f.id for f in stated.figures] != [f.id for f in computed.figures]:
        return differences(stated.model_dump(mode="json", include={"figures": {"__all__": {"id"}}}),
                           computed.model_dump(mode="json", include={"figures": {"__all__": {"id"}}}),
                           "headline", "page 1's figures recomputed from the rest of the sheet")  # fmt: skip
    out = differences(stated.method, computed.method, "headline.method", "the headline's method")
    for i, (mine, theirs) in enumerate(zip(stated.figures, computed.figures, strict=True)):
        source = f"page-1 figure {theirs.id}, recomputed from {theirs.source}"
        out += differences(mine, theirs, f"headline.figures[{i}]", source)
    return out
