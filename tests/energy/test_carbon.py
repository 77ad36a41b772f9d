"""Carbon: kWh × intensity × PUE, intensity from the spec or CodeCarbon's shipped data."""

from __future__ import annotations

import csv
import json

import pytest
from pydantic import ValidationError

from probes.core.measurement import NotMeasured
from probes.energy import CarbonSpec, EnergyError, EnergySpec, carbon_figures
from probes.energy.codecarbon_data import data_file


def _country(iso: str) -> dict:
    return json.loads(data_file("data/private_infra/global_energy_mix.json").read_text())[iso]


def test_spec_intensity_and_pue():
    config = EnergySpec(carbon=CarbonSpec(intensity_g_per_kwh=400.0, pue=1.2, country_iso="DEU"))
    result = carbon_figures(2.0, config)
    assert result.g_co2e.value == pytest.approx(960.0)
    assert result.g_co2e.unit == "gCO2e"
    assert result.intensity.source == "spec (energy.carbon.intensity_g_per_kwh)"
    assert result.intensity.location == "DEU"
    assert isinstance(result.intensity.year, NotMeasured)
    assert result.energy_basis == "measured"


@pytest.mark.parametrize("iso", ["FRA", "USA"])
def test_country_lookup_reads_codecarbon_data(iso):
    expected = _country(iso)
    result = carbon_figures(0.5, CarbonSpec(country_iso=iso))
    assert result.intensity.g_per_kwh == expected["carbon_intensity"]
    assert result.intensity.year == expected["year"]
    assert result.intensity.location == f"{expected['country_name']} ({iso})"
    assert "global_energy_mix.json" in result.intensity.source
    assert result.g_co2e.value == pytest.approx(0.5 * expected["carbon_intensity"])


def test_cloud_region_lookup():
    with data_file("data/cloud/impact.csv").open(encoding="utf-8-sig", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["provider"] == "gcp" and r["region"] == "europe-west9")
    result = carbon_figures(1.0, CarbonSpec(cloud_provider="gcp", cloud_region="europe-west9"))
    assert result.intensity.g_per_kwh == float(row["impact"])
    assert result.intensity.location.startswith("gcp europe-west9")
    assert result.intensity.year.reason == "data/cloud/impact.csv states no year"


def test_estimated_energy_stays_labelled():
    result = carbon_figures(1.0, CarbonSpec(intensity_g_per_kwh=100.0), basis="estimated")
    assert result.energy_basis == "estimated"
    assert "estimated energy" in result.g_co2e.definition


def test_unknown_locations_are_errors():
    with pytest.raises(EnergyError, match="country_iso: 'XYZ'"):
        carbon_figures(1.0, CarbonSpec(country_iso="XYZ"))
    with pytest.raises(EnergyError, match="cloud_region 'mars-1'"):
        carbon_figures(1.0, CarbonSpec(cloud_provider="gcp", cloud_region="mars-1"))


def test_bad_carbon_config_is_rejected():
    with pytest.raises(ValidationError, match="cloud_provider and cloud_region"):
        CarbonSpec(cloud_provider="gcp")
    with pytest.raises(ValidationError, match="country_iso"):
        CarbonSpec(country_iso="fr")
    with pytest.raises(ValidationError, match="pue"):
        CarbonSpec(pue=0.8)


def test_not_measured_without_intensity_or_energy():
    assert carbon_figures(1.0, CarbonSpec()).reason.startswith("no grid carbon intensity")
    missing = carbon_figures(NotMeasured(reason="no component measured"), CarbonSpec(intensity_g_per_kwh=1.0))
    assert missing.reason == "carbon needs energy: no component measured"
