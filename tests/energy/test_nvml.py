"""GPU discovery and channels against a fake NVML binding."""

from __future__ import annotations

import pytest

from probes.energy.components import ChannelReadError, Unavailable
from probes.energy.nvml import (
    NvmlEnergyChannel,
    NvmlFailure,
    NvmlLibraryMissing,
    NvmlPowerChannel,
    discover_gpus,
)
from tests.energy.energy_fakes import FakeClock, FakeNvml


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def nvml(clock) -> FakeNvml:
    return FakeNvml(clock)


def _only(found):
    (item,) = found
    return item


def test_counter_gpu_uses_total_energy(nvml, clock):
    nvml.add_gpu("H100", energy_mj=lambda t: 5_000_000 + 300_000 * t, power_mw=lambda t: 300_000)
    channel = _only(discover_gpus(nvml))
    assert isinstance(channel, NvmlEnergyChannel)
    assert channel.component.label == "GPU 0 (H100)"
    assert channel.read(0.0) == 0.0
    clock.t = 2.0
    assert channel.read(2.0) == pytest.approx(600.0)


def test_counter_restart_counts_energy_since_restart(nvml, clock):
    counter = {0.0: 10_000, 1.0: 20_000, 2.0: 3_000, 3.0: 8_000}  # mJ; restarted from 0 before t=2
    nvml.add_gpu("A100", energy_mj=lambda t: counter[t])
    channel = _only(discover_gpus(nvml))
    readings = []
    for t in counter:
        clock.t = t
        readings.append(channel.read(t))
    assert readings == pytest.approx([0.0, 10.0, 13.0, 18.0])
    assert channel.resets == 1


def test_missing_counter_falls_back_to_power_integration(nvml, clock):
    nvml.add_gpu("T4", energy_mj=None, power_mw=lambda t: 50_000)
    channel = _only(discover_gpus(nvml))
    assert isinstance(channel, NvmlPowerChannel)
    assert "trapezoidal integration" in channel.component.method
    readings = []
    for t in (0.0, 0.5, 1.0, 2.0):
        clock.t = t
        readings.append(channel.read(t))
    assert readings == pytest.approx([0.0, 25.0, 50.0, 100.0])


def test_read_error_raises_channel_error(nvml, clock):
    nvml.add_gpu("H100", energy_mj=lambda t: 1000 * t)
    channel = _only(discover_gpus(nvml))
    nvml.failing_times.add(1.0)
    clock.t = 1.0
    with pytest.raises(ChannelReadError, match="nvmlDeviceGetTotalEnergyConsumption failed: Unknown Error"):
        channel.read(1.0)


def test_no_counter_and_no_power_is_unavailable(nvml):
    nvml.add_gpu("old", energy_mj=None, power_mw=None)
    item = _only(discover_gpus(nvml))
    assert isinstance(item, Unavailable)
    assert item.not_measured.reason == (
        "no total-energy counter and nvmlDeviceGetPowerUsage failed: Not Supported"
    )


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (
            NvmlLibraryMissing("NVML Shared Library Not Found"),
            "no NVML library: NVML Shared Library Not Found",
        ),
        (NvmlFailure("Driver Not Loaded"), "NVML init failed: Driver Not Loaded"),
    ],
)
def test_init_failure_reasons(nvml, error, reason):
    nvml.init_error = error
    assert _only(discover_gpus(nvml)).not_measured.reason == reason


def test_no_device(nvml):
    assert _only(discover_gpus(nvml)).not_measured.reason == "no NVML device"


def test_gpu_check_compares_counter_with_integrated_power(nvml, clock):
    from probes.energy.gpu_check import compare

    # A 300 W board whose power reading is 3 % high: the ratio shows it.
    nvml.add_gpu("H200", energy_mj=lambda t: 300_000 * t, power_mw=lambda t: 309_000)

    def sleep(seconds: float) -> None:
        clock.t += seconds

    check = compare(nvml, 0, seconds=30.0, interval_s=0.5, clock=clock, sleep=sleep)
    assert check.window_s == pytest.approx(30.0)
    assert check.counter_j == pytest.approx(9000.0)
    assert check.integrated_power_j == pytest.approx(9270.0)
    assert check.ratio_integrated_to_counter == pytest.approx(1.03)
    assert check.samples == 61
