"""A host with no energy counter (every CPU-only cloud VM, the demo's host): the energy section states each
component's reason once, in the total, and shows what each would have measured, with no table of empty rows,
no window paragraph and no idle line repeating the reasons."""

from __future__ import annotations

import pytest

from factsheet.document.schema import EnergySection
from factsheet.render import render_html
from probes.core.measurement import NotMeasured
from probes.energy import CarbonSpec, EnergySpec, carbon_figures, energy_figures
from probes.energy.components import Component
from probes.energy.monitor import ComponentWindow, WindowEnergy
from tests.render.page import Page
from tests.support import sheet_fixture as fx

pytestmark = pytest.mark.unit

REASONS = {"GPU 0": "no NVML library", "CPU package": "/sys/class/powercap not present"}


@pytest.fixture(scope="module")
def page() -> Page:
    sheet = fx.build_sheet(fx.load_points())
    window = WindowEnergy(t_start=100.0, t_end=102.0, duration_s=2.0, sample_interval_s=0.1, components=[
        ComponentWindow(component=Component(kind=kind, index=0, label=label, source=f"{label} counter",
                                            boundary=f"{label} boundary", method=f"{label} method"),
                        energy_j=NotMeasured(reason=REASONS[label]), samples_in_window=0, counter_resets=0,
                        read_errors=0)
        for kind, label in (("gpu", "GPU 0"), ("cpu_package", "CPU package"))
    ])  # fmt: skip
    figures = energy_figures(window, NotMeasured(reason="idle power not measured: no measurable component"),
                             requests=3, output_tokens=9, config=EnergySpec())  # fmt: skip
    energy = EnergySection(energy=figures, carbon=carbon_figures(figures.energy_kwh(), CarbonSpec()))
    return Page.parse(render_html(sheet.model_copy(update={"energy": energy})))


def test_each_reason_is_stated_once_and_each_boundary_shown(page):
    energy = page.section("energy")
    text = energy.text
    for label, reason in REASONS.items():
        assert text.count(reason) == 2, (label, text)  # the total's line and carbon's, which rests on it
        assert f"{label} boundary" in text and f"{label} method" in text
    assert "Per component" not in energy.headings()
    assert "Components, had they been measured" in energy.headings()
    assert "Energy over the steady window" not in text and "Idle power:" not in text
