"""EnergyMonitor: sampling, window interpolation and idle power on fake counters with known truth."""

from __future__ import annotations

import time

import pytest

from probes.core.measurement import NotMeasured
from probes.energy import EnergyError, EnergyMonitor, EnergySpec
from tests.energy.energy_fakes import FakeClock, FakeNvml
from tests.support.fake_rapl import FakePowercap, wall_clock_counter


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def powercap(tmp_path) -> FakePowercap:
    return FakePowercap(tmp_path / "powercap")


def _config(powercap: FakePowercap, gpu: bool = False) -> EnergySpec:
    # A 10 s interval keeps the background thread asleep: the tests drive sample() at chosen times.
    return EnergySpec(powercap_root=str(powercap.root), sample_interval_s=10, gpu=gpu)


def _at(t: float, clock: FakeClock, powercap: FakePowercap, monitor: EnergyMonitor) -> None:
    clock.t = t
    powercap.set_time(t)
    monitor.sample()


def _of(window, label: str):
    return next(c for c in window.components if c.component.label == label)


def _energy(window, label: str):
    return _of(window, label).energy_j


def test_window_edges_interpolate_exactly_on_linear_counters(powercap, clock):
    # Constant 50 W for the 2 s window [0.55, 2.55] is 100 J, with no sample on either edge.
    powercap.add_zone("intel-rapl:0", "package-0", watts=50)
    nvml = FakeNvml(clock)
    nvml.add_gpu("H100", energy_mj=lambda t: 7_000_000 + 300_000 * t)
    nvml.add_gpu("T4", power_mw=lambda t: 70_000)
    monitor = EnergyMonitor(_config(powercap, gpu=True), nvml=nvml, clock=clock)
    with monitor:
        for t in (0.3, 0.9, 1.2, 1.8, 2.4, 3.0):
            _at(t, clock, powercap, monitor)
    window = monitor.window(0.55, 2.55)
    assert window.duration_s == pytest.approx(2.0)
    assert _energy(window, "CPU package 0") == pytest.approx(100.0)
    assert _energy(window, "GPU 0 (H100)") == pytest.approx(600.0)
    assert _energy(window, "GPU 1 (T4)") == pytest.approx(140.0)
    cpu = next(c for c in window.components if c.component.label == "CPU package 0")
    assert cpu.samples_in_window == 4
    assert [c.component.kind for c in window.components] == ["gpu", "gpu", "cpu_package", "dram"]


def test_window_outside_the_samples_is_not_measured(powercap, clock):
    powercap.add_zone("intel-rapl:0", "package-0", watts=50)
    monitor = EnergyMonitor(_config(powercap), clock=clock)
    with monitor:
        _at(1.0, clock, powercap, monitor)
    energy = _energy(monitor.window(0.5, 2.0), "CPU package 0")
    assert isinstance(energy, NotMeasured)
    assert energy.reason == "samples cover [0.000, 1.000], not the window [0.500, 2.000]"


def test_read_errors_are_counted_and_skipped(powercap, clock):
    nvml = FakeNvml(clock)
    nvml.add_gpu("H100", energy_mj=lambda t: 100_000 * t)
    nvml.failing_times.add(1.0)
    monitor = EnergyMonitor(_config(powercap, gpu=True), nvml=nvml, clock=clock)
    with monitor:
        for t in (1.0, 2.0, 3.0):
            _at(t, clock, powercap, monitor)
    (gpu,) = [c for c in monitor.window(0.5, 2.5).components if c.component.kind == "gpu"]
    assert gpu.energy_j == pytest.approx(200.0)
    assert gpu.read_errors == 1
    assert gpu.last_read_error == "nvmlDeviceGetTotalEnergyConsumption failed: Unknown Error"


def test_wrap_around_inside_the_window(powercap, clock):
    powercap.add_zone("intel-rapl:0", "package-0", watts=60, max_range_uj=100_000_000)
    monitor = EnergyMonitor(_config(powercap), clock=clock)
    with monitor:
        for t in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0):
            _at(t, clock, powercap, monitor)
    window = monitor.window(0.25, 2.75)
    assert _energy(window, "CPU package 0") == pytest.approx(150.0)
    assert _of(window, "CPU package 0").counter_resets == 1
    assert _of(window, "GPU").energy_j.reason == "GPU measurement disabled (energy.gpu = false)"


def test_idle_power_before_the_run(powercap, clock):
    # 20 W while idle (t < 10), 50 W under load afterwards.
    powercap.add_zone(
        "intel-rapl:0", "package-0", watts=0, energy=lambda t: 20 * t if t < 10 else 200 + 50 * (t - 10)
    )

    def sleep(seconds: float) -> None:
        _at(clock.t + seconds / 2, clock, powercap, monitor)
        clock.t += seconds / 2
        powercap.set_time(clock.t)

    monitor = EnergyMonitor(_config(powercap), clock=clock, sleep=sleep)
    with monitor:
        _at(1.0, clock, powercap, monitor)
        idle = monitor.measure_idle(4.0)
        for t in (12.0, 13.0, 15.0):
            _at(t, clock, powercap, monitor)
    assert (idle.t_start, idle.t_end) == (1.0, 5.0)
    (_gpu, cpu_idle, _dram) = idle.components
    assert cpu_idle.power_w == pytest.approx(20.0)
    assert _energy(monitor.window(12.5, 14.5), "CPU package 0") == pytest.approx(100.0)


def test_idle_disabled_or_nothing_to_measure(tmp_path):
    monitor = EnergyMonitor(EnergySpec(powercap_root=str(tmp_path / "none"), gpu=False))
    assert monitor.measure_idle(0).reason == "idle power not measured: energy.idle_s = 0"
    started = time.monotonic()
    idle = monitor.measure_idle(30)
    assert time.monotonic() - started < 5  # nothing to measure: it does not sit idle for 30 s
    assert idle.reason.startswith(
        "idle power not measured: no measurable component (GPU: GPU measurement disabled"
    )
    assert "CPU package: " in idle.reason


def test_reversed_window_is_rejected(powercap):
    with pytest.raises(EnergyError, match="t_end"):
        EnergyMonitor(_config(powercap)).window(2.0, 1.0)


def test_background_thread_samples_in_real_time(powercap):
    powercap.add_zone("intel-rapl:0", "package-0", watts=50)
    config = EnergySpec(powercap_root=str(powercap.root), sample_interval_s=0.01, gpu=False)
    with EnergyMonitor(config) as monitor:
        t_start = time.time()
        time.sleep(0.2)
        t_end = time.time()
    cpu = _of(monitor.window(t_start, t_end), "CPU package 0")
    assert cpu.energy_j == 0.0  # the fake counter stands still while the clock runs
    assert cpu.samples_in_window >= 5


def test_real_time_sampling_of_a_live_fake_counter(tmp_path):
    # The counter reads 50 W × the very stamp of each read the monitor's own thread makes
    # (fake_rapl.wall_clock_counter): the truth is 50 W over the window, whatever a busy host does to the
    # thread's timing (a writer thread advancing the counter fell behind beside a busy core).
    with wall_clock_counter(tmp_path / "powercap", watts=50) as root:
        config = EnergySpec(powercap_root=str(root), sample_interval_s=0.01, gpu=False)
        with EnergyMonitor(config) as monitor:
            time.sleep(0.05)
            t_start = time.time()
            time.sleep(0.3)
            t_end = time.time()
            time.sleep(0.05)
    window = monitor.window(t_start, t_end)
    # Linear in the monitor's clock, so the window's edges interpolate exactly (µJ rounding only).
    assert _energy(window, "CPU package 0") == pytest.approx(50 * (t_end - t_start), abs=1e-3)
    assert _of(window, "CPU package 0").samples_in_window >= 1
