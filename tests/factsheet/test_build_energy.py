"""The energy section of a build, from the load probe's steady window, on a fake powercap tree.

A writer thread advances a RAPL package counter at a known 30 W of wall-clock time (idle is the same
30 W): gross energy must equal 30 W × the window, net ≈ 0, and carbon = kWh × the given intensity.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from tests.support.fake_rapl import wall_clock_counter

pytestmark = pytest.mark.system

WATTS = 30.0


@pytest.fixture()
def powercap(tmp_path):
    with wall_clock_counter(tmp_path / "powercap", WATTS) as root:
        yield root


def test_energy_and_carbon_from_steady_window(tmp_path, mock_url, endpoint_spec, powercap):
    extra = (
        f"energy:\n  idle_s: 1\n  gpu: false\n  sample_interval_s: 0.05\n  powercap_root: {powercap}\n"
        "  carbon: {intensity_g_per_kwh: 400, pue: 1.2}\n"
    )
    spec = endpoint_spec(tmp_path, mock_url, extra)
    result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    sheet = json.loads((tmp_path / "out" / "factsheet.json").read_text())
    energy = sheet["energy"]["energy"]
    duration = energy["t_end"] - energy["t_start"]
    gross = energy["total"]["gross"]["energy_j"]["value"]
    assert gross == pytest.approx(WATTS * duration, rel=0.01)
    assert energy["total"]["net"]["energy_j"]["value"] == pytest.approx(0.0, abs=0.1 * gross + 0.3)
    assert energy["requests"] == sheet["load"]["points"][1]["result"]["metrics"]["completed"]
    per_token = energy["total"]["gross"]["j_per_output_token"]["value"]
    assert per_token == pytest.approx(gross / energy["output_tokens"])
    carbon = sheet["energy"]["carbon"]
    assert carbon["g_co2e"]["value"] == pytest.approx(gross / 3.6e6 * 400 * 1.2)
    # The GPU was switched off in the spec: said so, not left blank.
    reasons = [c["not_measured"]["reason"] for c in energy["components"] if "not_measured" in c]
    assert any("energy.gpu = false" in r for r in reasons)


def test_energy_rederives_from_the_kept_counter_samples(tmp_path, mock_url, endpoint_spec, powercap):
    """The counters' samples are raw records (schema 1.1.0): validate recomputes each component's window
    energy and the idle power from them, so an edited measurement is caught, not just derived figures."""
    extra = f"energy:\n  idle_s: 1\n  gpu: false\n  sample_interval_s: 0.05\n  powercap_root: {powercap}\n"
    spec = endpoint_spec(tmp_path, mock_url, extra)
    out = tmp_path / "out"
    assert CliRunner().invoke(app, ["build", str(spec), "-o", str(out)]).exit_code == 0
    sheet = json.loads((out / "factsheet.json").read_text())
    assert (
        sheet["schema_version"] >= "1.1.0"
        and sheet["energy"]["records"]["path"] == "records/energy-samples.jsonl"
    )
    ok = CliRunner().invoke(app, ["validate", str(out / "factsheet.json")])
    assert ok.exit_code == 0, ok.output
    (package,) = [c for c in sheet["energy"]["energy"]["components"] if "gross" in c]
    package["gross"]["energy_j"]["value"] *= 1.5
    (idle,) = [c for c in sheet["energy"]["energy"]["idle"]["components"] if isinstance(c["power_w"], float)]
    idle["power_w"] *= 0.5
    (out / "factsheet.json").write_text(json.dumps(sheet))
    edited = CliRunner().invoke(app, ["validate", str(out / "factsheet.json")])
    assert edited.exit_code == 1, edited.output
    assert "energy.energy.components[1].gross.energy_j.value" in edited.output
    assert "energy.energy.idle.components[1].power_w" in edited.output
