"""Energy figures recomputed from what they rest on. With the counters' samples kept:
each component's window energy and the idle power, through the monitor's own windowing; without them (the first schema)
from each component's stated window energy. Then every derived figure from those and the load point whose
steady window and counts they cover; carbon from that energy, the stated intensity and PUE."""

from __future__ import annotations

from pathlib import Path

from factsheet.binding import energy_context
from factsheet.document.schema import EnergySection, LoadSection, energy_point
from factsheet.rederive.compare import Discrepancy, differences
from factsheet.rederive.records import Binding, Expected, read_records
from probes.core.measurement import NotMeasured
from probes.energy import (
    CarbonSpec,
    ChannelSamples,
    ComponentWindow,
    EnergySpec,
    IdlePower,
    Unavailable,
    WindowEnergy,
    carbon_figures,
    energy_figures,
    idle_power,
    window_energy,
)
from probes.energy.figures import ComponentFigures, EnergyResult


def energy(
    section: EnergySection,
    load: LoadSection | NotMeasured,
    cpu_model: str | None,
    folder: Path,
    binding: Binding | None = None,
) -> list[Discrepancy]:
    if isinstance(section.energy, NotMeasured):
        if not isinstance(section.carbon, NotMeasured):
            # Carbon is computed from the measured energy: stated without it, it rests on nothing.
            return [
                Discrepancy(
                    figure="energy.carbon",
                    stated="measured",
                    recomputed=f"no energy measured ({section.energy.reason})",
                )
            ]
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
    window, idle = _stated_window(stated), stated.idle
    src = "each component's window energy, idle power and the load point's counts"
    if section.records is not None:
        expected = Expected(None)
        if entry is not None:
            fields = {
                "window": "energy.energy.window",
                "idle_window": "energy.energy.idle.window",
                "load_point": f"load.points[{load.points.index(entry)}] (the load point covered)",
            }
            expected = Expected(energy_context(stated, entry.result), fields)
        samples, problems = read_records(
            folder, section.records, ChannelSamples.model_validate, "energy.records", expected, binding
        )
        out += problems
        if samples is None:
            return out
        window, idle = _sampled_window(stated, samples)
        src = f"{section.records.path}, idle power and the load point's counts"
    again = energy_figures(
        window,
        idle,
        requests=requests,
        output_tokens=tokens,
        config=EnergySpec(estimate=bool(stated.estimated)),
        cpu_model=cpu_model,
    )
    out += differences(stated, again, base, src)
    out += _carbon(section, again)
    return out


def _stated_window(stated: EnergyResult) -> WindowEnergy:
    return WindowEnergy(
        t_start=stated.t_start,
        t_end=stated.t_end,
        duration_s=stated.t_end - stated.t_start,
        sample_interval_s=0.0,  # not used by the figures
        components=[_component_window(c) for c in stated.components],
    )


def _sampled_window(
    stated: EnergyResult, samples: list[ChannelSamples]
) -> tuple[WindowEnergy, IdlePower | NotMeasured]:
    """The window and idle power from the samples, as the monitor computed them during the build."""
    sampled = [s.component for s in samples]
    unavailable = [c for c in stated.components if isinstance(c, Unavailable) and c.component not in sampled]
    window = window_energy(samples, unavailable, stated.t_start, stated.t_end, 0.0)
    idle = stated.idle
    if not isinstance(idle, NotMeasured):
        idle = idle_power(window_energy(samples, unavailable, idle.t_start, idle.t_end, 0.0))
    return window, idle


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
    config = CarbonSpec(intensity_g_per_kwh=carbon.intensity.g_per_kwh, pue=carbon.pue)
    again = carbon_figures(energy_now.energy_kwh(carbon.energy_basis), config, basis=carbon.energy_basis)
    if isinstance(again, NotMeasured):
        return [Discrepancy(figure="energy.carbon", stated="measured", recomputed=again.reason)]
    src = "the energy, the stated intensity and PUE"
    return [
        *differences(carbon.energy_kwh, again.energy_kwh, "energy.carbon.energy_kwh", src),
        *differences(carbon.g_co2e.value, again.g_co2e.value, "energy.carbon.g_co2e.value", src),
    ]
