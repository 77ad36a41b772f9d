"""What the build spec (`load.server_view`) and `probe load` say about scraping the server's `/metrics`."""

from __future__ import annotations

from pydantic import Field

from probes.core.measurement import Model, Quantity

DEFAULT_INTERVAL_S = 1.0


class ServerViewSpec(Model):
    scrape: bool = Field(True, description="scrape the target's /metrics while each load point runs")
    interval_s: Quantity = Field(
        DEFAULT_INTERVAL_S, ge=0.05, le=60, description="seconds between scrapes (absolute schedule)"
    )
    stop_when_saturated: bool = Field(
        False,
        description="end a point early when its scraped waiting queue grows without bound (the saturation "
        "test, probes/server_view/saturation.py); the point then says so (stop_reason 'saturated')",
    )
