"""Background sampling of every energy channel, and energy over a window of the run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from pydantic import Field

from probes.core.measurement import Model, NotMeasured
from probes.energy.components import ChannelReadError, Component, EnergyChannel, Unavailable
from probes.energy.nvml import NvmlBinding, discover_gpus, gpu_disabled
from probes.energy.rapl import discover_rapl
from probes.energy.spec import EnergyError, EnergySpec

IDLE_METHOD = (
    "mean power = energy over the idle window / its duration, measured before the run with no requests"
    " in flight, by the same counters as the run"
)


class ComponentWindow(Model):
    """Energy of one component over the window, or why it is not measured."""

    component: Component
    energy_j: float | NotMeasured
    samples_in_window: int = Field(ge=0, description="samples strictly inside the window")
    counter_resets: int = Field(ge=0, description="counter wrap-arounds / restarts seen while monitoring")
    read_errors: int = Field(ge=0, description="failed readings while monitoring (skipped samples)")
    last_read_error: str | None = None


class WindowEnergy(Model):
    """Energy per component over [t_start, t_end] (epoch seconds)."""

    t_start: float
    t_end: float
    duration_s: float = Field(gt=0)
    sample_interval_s: float
    components: list[ComponentWindow]


class ComponentIdle(Model):
    component: Component
    power_w: float | NotMeasured
    samples: int = Field(ge=0)


class IdlePower(Model):
    """Idle power per component, measured before the run (reported separately, MLPerf Power style)."""

    t_start: float
    t_end: float
    duration_s: float
    method: str = IDLE_METHOD
    components: list[ComponentIdle]


class ChannelSamples(Model):
    """Every reading of one channel while monitoring: the raw records the energy figures rest on."""

    component: Component
    times: list[float] = Field(description="epoch seconds of each reading")
    joules: list[float] = Field(description="cumulative energy at each reading (counter wraps undone)")
    counter_resets: int = Field(ge=0)
    read_errors: int = Field(ge=0)
    last_read_error: str | None = None


def window_energy(
    samples: list[ChannelSamples],
    unavailable: list[Unavailable],
    t_start: float,
    t_end: float,
    sample_interval_s: float,
) -> WindowEnergy:
    """Energy per component over [t_start, t_end] from the channels' samples (the monitor and
    `factsheet validate`'s re-derivation both call this)."""
    if not t_end > t_start:
        raise EnergyError(f"energy window: t_end ({t_end}) must be after t_start ({t_start})")
    measured = [_window_of(s, t_start, t_end) for s in samples]
    missing = [
        ComponentWindow(
            component=u.component,
            energy_j=u.not_measured,
            samples_in_window=0,
            counter_resets=0,
            read_errors=0,
        )
        for u in unavailable
    ]
    return WindowEnergy(
        t_start=t_start,
        t_end=t_end,
        duration_s=t_end - t_start,
        sample_interval_s=sample_interval_s,
        components=_ordered(measured + missing),
    )


def idle_power(window: WindowEnergy) -> IdlePower:
    """Mean power per component over an idle window."""
    return IdlePower(
        t_start=window.t_start,
        t_end=window.t_end,
        duration_s=window.duration_s,
        components=[_idle_of(c, window.duration_s) for c in window.components],
    )


@dataclass
class _Series:
    channel: EnergyChannel
    times: list[float] = field(default_factory=list)
    joules: list[float] = field(default_factory=list)
    read_errors: int = 0
    last_error: str | None = None


class EnergyMonitor:
    """Samples every available energy counter in a background thread while in its `with` block."""

    def __init__(
        self,
        config: EnergySpec,
        *,
        nvml: NvmlBinding | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self._nvml = nvml
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._series: list[_Series] | None = None
        self.unavailable: list[Unavailable] = []

    def __enter__(self) -> EnergyMonitor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        if self._thread is not None:
            return
        if self._series is None:
            self._discover()
        self.sample()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="energy-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self.sample()

    def sample(self) -> None:
        """Read every channel once now (the background thread calls this every sample_interval_s)."""
        with self._lock:
            for series in self._series or []:
                t = self._clock()
                try:
                    joules = series.channel.read(t)
                except ChannelReadError as err:
                    series.read_errors += 1
                    series.last_error = str(err)
                    continue
                series.times.append(t)
                series.joules.append(joules)

    def samples(self) -> list[ChannelSamples]:
        """A copy of every channel's readings so far (kept beside the factsheet as raw records)."""
        if self._series is None:
            self._discover()
        with self._lock:
            return [
                ChannelSamples(
                    component=s.channel.component,
                    times=list(s.times),
                    joules=list(s.joules),
                    counter_resets=s.channel.resets,
                    read_errors=s.read_errors,
                    last_read_error=s.last_error,
                )
                for s in self._series
            ]

    def window(self, t_start: float, t_end: float) -> WindowEnergy:
        """Energy per component over [t_start, t_end], interpolated between the samples around each edge."""
        if not t_end > t_start:
            raise EnergyError(f"energy window: t_end ({t_end}) must be after t_start ({t_start})")
        return window_energy(self.samples(), self.unavailable, t_start, t_end, self.config.sample_interval_s)

    def measure_idle(self, seconds: float) -> IdlePower | NotMeasured:
        """Mean power per component over `seconds` of idling, before the run."""
        if seconds <= 0:
            return NotMeasured(reason="idle power not measured: energy.idle_s = 0")
        if self._series is None:
            self._discover()
        if not self._series:
            reasons = "; ".join(f"{u.component.label}: {u.not_measured.reason}" for u in self.unavailable)
            return NotMeasured(reason=f"idle power not measured: no measurable component ({reasons})")
        was_running = self._thread is not None
        self.start()
        try:
            t_start = self._clock()
            self._sleep(seconds)
            t_end = self._clock()
            self.sample()
        finally:
            if not was_running:
                self.stop()
        return idle_power(self.window(t_start, t_end))

    def _discover(self) -> None:
        gpus = discover_gpus(self._nvml) if self.config.gpu else [gpu_disabled()]
        found = gpus + discover_rapl(self.config.powercap_root)
        self.unavailable = [f for f in found if isinstance(f, Unavailable)]
        self._series = [_Series(channel=f) for f in found if not isinstance(f, Unavailable)]

    def _run(self) -> None:
        while not self._stop.wait(self.config.sample_interval_s):
            self.sample()


def _window_of(series: ChannelSamples, t_start: float, t_end: float) -> ComponentWindow:
    times = np.asarray(series.times)
    energy: float | NotMeasured
    if times.size < 2 or times[0] > t_start or times[-1] < t_end:
        covered = f"[{times[0]:.3f}, {times[-1]:.3f}]" if times.size else "no samples"
        reason = f"samples cover {covered}, not the window [{t_start:.3f}, {t_end:.3f}]"
        if series.last_read_error:
            reason += f"; last read error: {series.last_read_error}"
        energy = NotMeasured(reason=reason)
    else:
        edges = np.interp([t_start, t_end], times, np.asarray(series.joules))
        energy = float(edges[1] - edges[0])
    return ComponentWindow(
        component=series.component,
        energy_j=energy,
        samples_in_window=int(((times > t_start) & (times < t_end)).sum()),
        counter_resets=series.counter_resets,
        read_errors=series.read_errors,
        last_read_error=series.last_read_error,
    )


def _idle_of(window: ComponentWindow, duration_s: float) -> ComponentIdle:
    energy = window.energy_j
    power = energy if isinstance(energy, NotMeasured) else energy / duration_s
    return ComponentIdle(component=window.component, power_w=power, samples=window.samples_in_window)


_KIND_ORDER = {"gpu": 0, "cpu_package": 1, "dram": 2}


def _ordered(components: list[ComponentWindow]) -> list[ComponentWindow]:
    return sorted(components, key=_order_key)


def _order_key(window: ComponentWindow) -> tuple[int, int]:
    index = window.component.index
    return _KIND_ORDER[window.component.kind], -1 if index is None else index
