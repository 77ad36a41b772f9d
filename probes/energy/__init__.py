"""Energy and carbon probe: measured where the hardware allows, not measured (with the reason) where not."""

from probes.energy.carbon import CarbonIntensity, CarbonResult, carbon_figures, resolve_intensity
from probes.energy.components import Component, Unavailable
from probes.energy.config import CarbonConfig, EnergyConfig, EnergyError
from probes.energy.figures import (
    ComponentFigures,
    EnergyFigures,
    EnergyResult,
    Quantity,
    TotalFigures,
    energy_figures,
)
from probes.energy.monitor import ComponentWindow, EnergyMonitor, IdlePower, WindowEnergy
from probes.energy.nvml import NvmlBinding

__all__ = [
    "CarbonConfig",
    "CarbonIntensity",
    "CarbonResult",
    "Component",
    "ComponentFigures",
    "ComponentWindow",
    "EnergyConfig",
    "EnergyError",
    "EnergyFigures",
    "EnergyMonitor",
    "EnergyResult",
    "IdlePower",
    "NvmlBinding",
    "Quantity",
    "TotalFigures",
    "Unavailable",
    "WindowEnergy",
    "carbon_figures",
    "energy_figures",
    "resolve_intensity",
]
