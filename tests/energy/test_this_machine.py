"""On a machine without RAPL or NVML the section says not measured, with the exact reasons."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from probes.core.measurement import NotMeasured
from probes.energy import EnergyMonitor, EnergySpec, Unavailable, energy_figures
from probes.energy.nvml import PynvmlBinding, discover_gpus


def _nvml_error() -> str | None:
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as err:
        return str(err)
    pynvml.nvmlShutdown()
    return None


NVML_ERROR = _nvml_error()
NO_POWERCAP = not Path("/sys/class/powercap").exists()


@pytest.mark.skipif(NVML_ERROR is None, reason="NVML works here")
def test_real_nvml_failure_is_the_reason():
    (gpu,) = discover_gpus(PynvmlBinding())
    assert isinstance(gpu, Unavailable)
    assert NVML_ERROR in gpu.not_measured.reason
    assert gpu.not_measured.reason.startswith(("no NVML library: ", "NVML init failed: "))


@pytest.mark.skipif(NVML_ERROR is None or not NO_POWERCAP, reason="something is measurable here")
def test_default_config_reports_every_component_not_measured():
    config = EnergySpec(idle_s=5)
    with EnergyMonitor(config) as monitor:
        idle = monitor.measure_idle(config.idle_s)
        t_start = time.time()
        time.sleep(0.05)
        t_end = time.time()
    result = energy_figures(monitor.window(t_start, t_end), idle, requests=1, output_tokens=1, config=config)
    reasons = {c.component.label: c.not_measured.reason for c in result.components}
    assert reasons == {
        "GPU": f"no NVML library: {NVML_ERROR}"
        if "Library" in NVML_ERROR
        else f"NVML init failed: {NVML_ERROR}",
        "CPU package": "/sys/class/powercap not present",
        "DRAM": "/sys/class/powercap not present",
    }
    assert isinstance(result.total, NotMeasured)
    assert isinstance(idle, NotMeasured)
