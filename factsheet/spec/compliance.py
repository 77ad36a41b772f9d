"""The build spec's optional `compliance:` section (imported by factsheet.spec.build)."""

from __future__ import annotations

from pydantic import Field

from probes.core.measurement import Model


class ComplianceSpec(Model):
    """Policies checked at the end of `factsheet build`; the build's exit code follows the gate."""

    policies: list[str] = Field(
        min_length=1, description="policy files (relative to the spec) or built-in profile names"
    )
    allow_insufficient: bool = Field(
        False, description="insufficient evidence on an error rule warns instead of failing the gate"
    )
