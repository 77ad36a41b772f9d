"""Energy figures recomputed from what they rest on: each component's energy over the window (the
measurement itself: the samples are not kept), the idle power, and the load point whose steady window and
counts they cover; carbon from that energy, the stated intensity and PUE."""

from __future__ import annotations

from factsheet.build import energy_point
from factsheet.rederive.compare import Discrepancy, differences
from factsheet.schema import EnergySection, LoadSection
from probes.energy import (
    CarbonConfig,
    ComponentWindow,
    EnergyConfig,
    WindowEnergy,
    carbon_figures,
    energy_figures,
)
from probes.energy.figures import ComponentFigures, EnergyResult
from probes.measurement import NotMeasured


def energy(
    section: EnergySection, load: LoadSection | NotMeasured, cpu_model: str | None
) -> list[Discrepancy]:
    if isinstance(section.energy, NotMeasured):
        return []
    stated, base = section.energy, "energy.energy"
    out: list[Discrepancy] = []
    requests, tokens = stated.requests, stated.output_tokens
    entry = None if isinstance(load, NotMeasured) else energy_point(load.points)
    if entry is not None:
        m, src = entry.result.metrics, f"{entry.records.path} (the steady window the energy covers)"
        requests, tokens = m.completed, m.total_output_tokens
        out += differences(
            [stated.t_start, stated.t_end], list(entry.result.window_epoch), f"{base}.window", src
        )
        out += differences(stated.requests, requests, f"{base}.requests", src)
        out += differences(stated.output_tokens, tokens, f"{base}.output_tokens", src)
    window = WindowEnergy(
        t_start=stated.t_start,
        t_end=stated.t_end,
        duration_s=stated.t_end - stated.t_start,
        sample_interval_s=0.0,  # not used by the figures
        components=[_component_window(c) for c in stated.components],
    )
    again = energy_figures(
        window,
        stated.idle,
        requests=requests,
        output_tokens=tokens,
        config=EnergyConfig(estimate=bool(stated.estimated)),
        cpu_model=cpu_model,
    )
    src = "each component's window energy, idle power and the load point's counts"
    out += differences(stated, again, base, src)
    out += _carbon(section, again)
    return out


def _component_window(c) -> ComponentWindow:
    if isinstance(c, ComponentFigures):
        return ComponentWindow(
            component=c.component,
            energy_j=c.gross.energy_j.value,
            samples_in_window=c.samples_in_window,
            counter_resets=c.counter_resets,
            read_errors=c.read_errors,
        )
    return ComponentWindow(
        component=c.component, energy_j=c.not_measured, samples_in_window=0, counter_resets=0, read_errors=0
    )


def _carbon(section: EnergySection, energy_now: EnergyResult) -> list[Discrepancy]:
    carbon = section.carbon
    if isinstance(carbon, NotMeasured):
        return []
    config = CarbonConfig(intensity_g_per_kwh=carbon.intensity.g_per_kwh, pue=carbon.pue)
    again = carbon_figures(energy_now.energy_kwh(carbon.energy_basis), config, basis=carbon.energy_basis)
    if isinstance(again, NotMeasured):
        return [Discrepancy(figure="energy.carbon", stated="measured", recomputed=again.reason)]
    src = "the energy, the stated intensity and PUE"
    return [
        *differences(carbon.energy_kwh, again.energy_kwh, "energy.carbon.energy_kwh", src),
        *differences(carbon.g_co2e.value, again.g_co2e.value, "energy.carbon.g_co2e.value", src),
    ]
