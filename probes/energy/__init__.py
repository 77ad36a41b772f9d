"""Energy and carbon probe: measured where the hardware allows, not measured (with the reason) where not.

Use around the load run (energy and performance from the same run, idle reported separately):

    with EnergyMonitor(config) as monitor:
        idle = monitor.measure_idle(config.idle_s)   # before any request is sent
        ... run the load probe ...
    window = monitor.window(steady_start, steady_end)  # the load probe's steady window, epoch seconds
    energy = energy_figures(window, idle, requests=n, output_tokens=k, config=config)
    carbon = carbon_figures(energy.energy_kwh("measured"), config)
    # only with config.estimate: carbon_figures(energy.energy_kwh("estimated"), config, basis="estimated")
"""

from probes.energy.carbon import CarbonIntensity, CarbonResult, carbon_figures, resolve_intensity
from probes.energy.components import Component, Unavailable
from probes.energy.figures import (
    ComponentFigures,
    EnergyFigures,
    EnergyResult,
    Quantity,
    TotalFigures,
    energy_figures,
)
from probes.energy.monitor import (
    ChannelSamples,
    ComponentWindow,
    EnergyMonitor,
    IdlePower,
    WindowEnergy,
    idle_power,
    window_energy,
)
from probes.energy.nvml import NvmlBinding
from probes.energy.spec import CarbonSpec, EnergyError, EnergySpec

__all__ = [
    "CarbonIntensity",
    "CarbonResult",
    "CarbonSpec",
    "ChannelSamples",
    "Component",
    "ComponentFigures",
    "ComponentWindow",
    "EnergyError",
    "EnergyFigures",
    "EnergyMonitor",
    "EnergyResult",
    "EnergySpec",
    "IdlePower",
    "NvmlBinding",
    "Quantity",
    "TotalFigures",
    "Unavailable",
    "WindowEnergy",
    "carbon_figures",
    "energy_figures",
    "idle_power",
    "resolve_intensity",
    "window_energy",
]
