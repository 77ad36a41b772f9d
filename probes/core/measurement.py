"""Primitives every probe's result is built from.

A figure is either measured (with its definition, unit, sample size and method) or
explicitly not measured with the reason. Nothing here ever supplies a default value.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, Strict

MS_PER_S = 1000.0  # latencies are milliseconds at every boundary; run times and budgets are seconds
PERCENTILE_METHOD = "linear interpolation between closest ranks (numpy.percentile method='linear')"
DEFAULT_PERCENTILES: tuple[float, ...] = (50.0, 90.0, 95.0, 99.0)


class Model(BaseModel):
    """Base for every boundary model: unknown fields are an error, not a silent drop."""

    model_config = ConfigDict(extra="forbid")


# A number someone writes in a spec is read as written, never converted: a count refuses "2", 2.0 and true
# (pydantic's lax mode read "2" as 2, 51.0 as 51 past a validator that checked ints only, and "-5" repeats
# as none); a quantity takes an integer but no string or bool. Every number field of a spec section is one.
Count = Annotated[int, Strict()]
Quantity = Annotated[float, Strict()]


# How every output writes a figure that does not exist (an interval without that end, a run that gave none).
MISSING = "—"


def shown(value: float | None, spec: str = "g") -> str:
    """`value` formatted by `spec`, or MISSING when there is none: one marker in every output."""
    return MISSING if value is None else format(value, spec)


class Bounded:
    """An interval whose ends may be missing (None: too few samples for that end, or no end at all). Mixed
    into every interval type, so "are both ends there" is asked one way."""

    def bounds(self) -> tuple[float, float] | None:
        """(lower, upper) when both ends exist, else None."""
        lower, upper = getattr(self, "lower"), getattr(self, "upper")  # noqa: B009 (fields of the model)
        return None if lower is None or upper is None else (lower, upper)


class NotMeasured(Model):
    """A figure or section that could not be measured, and why."""

    status: Literal["not_measured"] = "not_measured"
    reason: str = Field(min_length=1)


class Distribution(Model):
    """Summary of a sample: mean, percentiles, and what they rest on."""

    unit: str
    definition: str
    n: int = Field(ge=0, description="number of samples the figures rest on")
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    max: float | None = None
    percentiles: dict[str, float] = Field(
        default_factory=dict, description="keys 'p50', 'p90', ...; empty when n == 0"
    )
    percentile_method: str = PERCENTILE_METHOD

    def p(self, q: float) -> float | None:
        return self.percentiles.get(percentile_key(q))


def percentile_key(q: float) -> str:
    return f"p{q:g}"


def summarize(
    values: list[float] | np.ndarray,
    *,
    unit: str,
    definition: str,
    percentiles: tuple[float, ...] = DEFAULT_PERCENTILES,
) -> Distribution:
    """Distribution of `values`; an empty sample gives n=0 and no figures (never zeros)."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return Distribution(unit=unit, definition=definition, n=0)
    qs = np.percentile(arr, percentiles, method="linear")
    return Distribution(
        unit=unit,
        definition=definition,
        n=int(arr.size),
        mean=float(arr.mean()),
        std=float(arr.std(ddof=1)) if arr.size > 1 else None,
        min=float(arr.min()),
        max=float(arr.max()),
        percentiles={percentile_key(q): float(v) for q, v in zip(percentiles, qs, strict=True)},
    )
