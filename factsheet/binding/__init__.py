"""Raw records bound to their context: each records file starts with a header naming the
sha256 of the context it was measured in (a load point's settings, a capacity step, the accuracy run, the
energy window), computed here the same way by the build that writes it and by `validate` that checks it."""

from factsheet.binding.context import (
    ROLES,
    AccuracyContext,
    CapacityStepContext,
    Context,
    EnergyContext,
    LoadPointContext,
    RecordsHeader,
    ServerScrapesContext,
    accuracy_context,
    capacity_step_context,
    context_digest,
    energy_context,
    header_line,
    load_point_context,
    parse_header,
    server_scrapes_context,
    stated_host,
)

__all__ = [
    "ROLES",
    "AccuracyContext",
    "CapacityStepContext",
    "Context",
    "EnergyContext",
    "LoadPointContext",
    "RecordsHeader",
    "ServerScrapesContext",
    "accuracy_context",
    "capacity_step_context",
    "context_digest",
    "energy_context",
    "header_line",
    "load_point_context",
    "parse_header",
    "server_scrapes_context",
    "stated_host",
]
