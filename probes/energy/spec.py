"""The spec's `energy:` section."""

from __future__ import annotations

from pydantic import Field, model_validator

from probes.core.errors import InputError
from probes.core.measurement import Model, Quantity


class EnergyError(InputError):
    """Bad energy or carbon configuration (the CLI maps it to exit 2)."""


class CarbonSpec(Model):
    """Where the grid carbon intensity comes from; at most one source is used, in the order below."""

    intensity_g_per_kwh: Quantity | None = Field(
        default=None,
        ge=0,
        description="grid carbon intensity in gCO2e/kWh given by the spec; takes precedence over look-ups",
    )
    country_iso: str | None = Field(
        default=None,
        pattern=r"^[A-Z]{3}$",
        description="ISO-3166 alpha-3 country code (e.g. FRA) looked up in CodeCarbon's global_energy_mix.json;"
        " with intensity_g_per_kwh it only labels the location",
    )
    cloud_provider: str | None = Field(
        default=None, description="cloud provider as in CodeCarbon's cloud/impact.csv (e.g. gcp)"
    )
    cloud_region: str | None = Field(
        default=None, description="cloud region as in CodeCarbon's cloud/impact.csv (e.g. europe-west9)"
    )
    pue: Quantity = Field(
        default=1.0,
        ge=1.0,
        description="power usage effectiveness of the facility; carbon = kWh × intensity × PUE",
    )

    @model_validator(mode="after")
    def _cloud_pair(self) -> CarbonSpec:
        if (self.cloud_provider is None) != (self.cloud_region is None):
            raise EnergyError("energy.carbon: cloud_provider and cloud_region must be given together")
        if self.cloud_provider is not None and self.country_iso is not None:
            raise EnergyError(
                "energy.carbon: give either country_iso or cloud_provider/cloud_region, not both"
            )
        return self


class EnergySpec(Model):
    """How energy is measured around the load run."""

    idle_s: Quantity = Field(
        default=10.0,
        ge=0,
        description="seconds of idle power measurement before the run; 0 disables it and net figures"
        " are then not measured",
    )
    sample_interval_s: Quantity = Field(
        default=0.1, gt=0, le=10, description="seconds between background samples of every counter"
    )
    powercap_root: str = Field(
        default="/sys/class/powercap", description="sysfs powercap root holding the RAPL zones"
    )
    gpu: bool = Field(default=True, description="measure GPUs through NVML")
    estimate: bool = Field(
        default=False,
        description="add a CodeCarbon-style TDP estimate for the CPU package when it is not measured;"
        " reported as estimated, never mixed with measured figures",
    )
    carbon: CarbonSpec = Field(default_factory=CarbonSpec, description="grid carbon intensity and PUE")
