"""Carbon emissions: energy × grid carbon intensity × PUE, intensity from the spec or CodeCarbon's data."""

from __future__ import annotations

import csv
import json
from functools import cache

from pydantic import Field

from probes.core.measurement import Model, NotMeasured
from probes.energy.codecarbon_data import data_file, describe
from probes.energy.figures import Basis, Quantity
from probes.energy.spec import CarbonSpec, EnergyError, EnergySpec

_COUNTRY_FILE = "data/private_infra/global_energy_mix.json"
_CLOUD_FILE = "data/cloud/impact.csv"
METHOD = "gCO2e = kWh × grid carbon intensity (gCO2e/kWh) × PUE"


class CarbonIntensity(Model):
    g_per_kwh: float = Field(ge=0, description="grid carbon intensity, gCO2e per kWh")
    source: str
    year: int | NotMeasured
    location: str | NotMeasured


class CarbonResult(Model):
    energy_kwh: float
    energy_basis: Basis = Field(description="whether the kWh were measured or estimated")
    intensity: CarbonIntensity
    pue: float
    g_co2e: Quantity
    method: str = METHOD


def carbon_figures(
    energy_kwh: float | NotMeasured, config: EnergySpec | CarbonSpec, *, basis: Basis = "measured"
) -> CarbonResult | NotMeasured:
    """Emissions of `energy_kwh`; not measured when the energy or the intensity is not known."""
    carbon = config.carbon if isinstance(config, EnergySpec) else config
    if isinstance(energy_kwh, NotMeasured):
        return NotMeasured(reason=f"carbon needs energy: {energy_kwh.reason}")
    intensity = resolve_intensity(carbon)
    if isinstance(intensity, NotMeasured):
        return intensity
    grams = energy_kwh * intensity.g_per_kwh * carbon.pue
    return CarbonResult(
        energy_kwh=energy_kwh,
        energy_basis=basis,
        intensity=intensity,
        pue=carbon.pue,
        g_co2e=Quantity(
            value=grams,
            unit="gCO2e",
            definition=f"emissions of the {basis} energy in the window: {METHOD}",
        ),
    )


def resolve_intensity(carbon: CarbonSpec) -> CarbonIntensity | NotMeasured:
    """The intensity the spec gives or points to; raises EnergyError for an unknown country or region."""
    if carbon.intensity_g_per_kwh is not None:
        return _from_spec(carbon)
    if carbon.cloud_provider is not None:
        return _from_cloud(carbon.cloud_provider, carbon.cloud_region)
    if carbon.country_iso is not None:
        return _from_country(carbon.country_iso)
    return NotMeasured(
        reason="no grid carbon intensity: the spec gives none of energy.carbon.intensity_g_per_kwh,"
        " country_iso, cloud_provider/cloud_region"
    )


def _from_spec(carbon: CarbonSpec) -> CarbonIntensity:
    location: str | NotMeasured = carbon.country_iso or NotMeasured(
        reason="no location given with energy.carbon.intensity_g_per_kwh"
    )
    return CarbonIntensity(
        g_per_kwh=carbon.intensity_g_per_kwh,
        source="spec (energy.carbon.intensity_g_per_kwh)",
        year=NotMeasured(reason="the spec gives no year for its intensity"),
        location=location,
    )


def _from_country(iso: str) -> CarbonIntensity:
    entry = _country_mix().get(iso)
    if entry is None:
        raise EnergyError(f"energy.carbon.country_iso: '{iso}' is not in {describe(_COUNTRY_FILE)}")
    return CarbonIntensity(
        g_per_kwh=float(entry["carbon_intensity"]),
        source=describe(_COUNTRY_FILE),
        year=int(entry["year"]),
        location=f"{entry['country_name']} ({iso})",
    )


def _from_cloud(provider: str, region: str) -> CarbonIntensity:
    for row in _cloud_impact():
        if row["provider"] == provider and row["region"] == region:
            place = ", ".join(p for p in (row["city"], row["state"], row["country_name"]) if p)
            return CarbonIntensity(
                g_per_kwh=float(row["impact"]),
                source=f"{describe(_CLOUD_FILE)} (provider figure from {row['source']})",
                year=NotMeasured(reason=f"{_CLOUD_FILE} states no year"),
                location=f"{provider} {region} ({place})",
            )
    raise EnergyError(
        f"energy.carbon: cloud_provider '{provider}' / cloud_region '{region}' is not in {describe(_CLOUD_FILE)}"
    )


@cache
def _country_mix() -> dict[str, dict]:
    return json.loads(data_file(_COUNTRY_FILE).read_text(encoding="utf-8"))


@cache
def _cloud_impact() -> tuple[dict[str, str], ...]:
    with data_file(_CLOUD_FILE).open(newline="", encoding="utf-8-sig") as f:
        return tuple(csv.DictReader(f))
