"""Fakes for the energy probe: a powercap sysfs tree, an NVML binding and a settable clock."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from probes.energy.nvml import NvmlFailure, NvmlNotSupported

EnergyOfTime = Callable[[float], float]


class FakeClock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class FakePowercap:
    """intel-rapl zones whose energy_uj counters follow energy(t) in joules, wrapped like the hardware."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._zones: dict[Path, tuple[EnergyOfTime, int]] = {}

    def add_zone(self, rel: str, name: str, watts: float, max_range_uj: int = 2**32, energy=None) -> Path:
        zone = self.root / rel
        zone.mkdir(parents=True, exist_ok=True)
        (zone / "name").write_text(name + "\n")
        (zone / "max_energy_range_uj").write_text(f"{max_range_uj}\n")
        self._zones[zone] = (energy or (lambda t, w=watts: w * t), max_range_uj)
        self.set_time(0.0)
        return zone

    def set_time(self, t: float) -> None:
        for zone, (energy, max_range) in self._zones.items():
            (zone / "energy_uj").write_text(f"{round(energy(t) * 1e6) % max_range}\n")


class FakeNvml:
    """NVML binding whose counters and power follow functions of a FakeClock's time."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.init_error: NvmlFailure | None = None
        self.failing_times: set[float] = set()
        self._names: list[str] = []
        self._energy: list[Callable[[float], int] | None] = []
        self._power: list[Callable[[float], int] | None] = []

    def add_gpu(self, name: str, energy_mj=None, power_mw=None) -> None:
        """energy_mj / power_mw: functions of time; None means the device lacks that NVML function."""
        self._names.append(name)
        self._energy.append(energy_mj)
        self._power.append(power_mw)

    def init(self) -> None:
        if self.init_error is not None:
            raise self.init_error

    def device_count(self) -> int:
        return len(self._names)

    def device_name(self, index: int) -> str:
        return self._names[index]

    def total_energy_mj(self, index: int) -> int:
        return self._read(self._energy[index])

    def power_mw(self, index: int) -> int:
        return self._read(self._power[index])

    def _read(self, fn) -> int:
        if fn is None:
            raise NvmlNotSupported("Not Supported")
        if self.clock.t in self.failing_times:
            raise NvmlFailure("Unknown Error")
        return int(round(fn(self.clock.t)))
