"""Figure-by-figure comparison of what a factsheet states with what its raw records give."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

from probes.core.measurement import Model

# JSON keeps a float's shortest repr, so a figure read back is bit-exact; the margin only absorbs another
# numpy/scipy build summing in a different order. An edited figure differs by far more.
TOLERANCE = {"rel": 1e-9, "abs": 1e-9}


class Discrepancy(Model):
    """One figure whose stated value is not what its raw records give."""

    figure: str = Field(description="path of the figure in factsheet.json, e.g. load.points[0].result.…")
    stated: Any = Field(None, description="what the factsheet says")
    recomputed: Any = Field(None, description="what the raw records give")
    source: str = Field("", description="the raw records (or other stated inputs) it was recomputed from")

    def describe(self) -> str:
        where = f" (from {self.source})" if self.source else ""
        return f"{self.figure}: stated {_short(self.stated)}, recomputed {_short(self.recomputed)}{where}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=TOLERANCE["rel"], abs_tol=TOLERANCE["abs"])
    return a == b


def differences(stated: Any, recomputed: Any, path: str, source: str) -> list[Discrepancy]:
    """Every leaf where the two trees (models, dicts, lists, scalars) differ, named by its path.

    Only what the document states is compared: a figure a later minor version added (absent from an older
    factsheet, so unset in its model) is not held against it; a stated figure the records do not give is.
    """
    if isinstance(stated, BaseModel):
        stated = stated.model_dump(mode="json", exclude_unset=True)
    if isinstance(recomputed, BaseModel):
        recomputed = recomputed.model_dump(mode="json")
    if isinstance(stated, dict) and isinstance(recomputed, dict):
        out: list[Discrepancy] = []
        for key, value in stated.items():
            out += differences(value, recomputed.get(key), f"{path}.{key}", source)
        return out
    if (
        isinstance(stated, list | tuple)
        and isinstance(recomputed, list | tuple)
        and len(stated) == len(recomputed)
    ):
        out = []
        for i, (a, b) in enumerate(zip(stated, recomputed, strict=True)):
            out += differences(a, b, f"{path}[{i}]", source)
        return out
    if same(stated, recomputed):
        return []
    return [Discrepancy(figure=path, stated=stated, recomputed=recomputed, source=source)]
