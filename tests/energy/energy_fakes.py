"""Fakes for the energy probe: an NVML binding and a settable clock (the powercap tree: tests.support.fake_rapl)."""

from __future__ import annotations

from collections.abc import Callable

from probes.energy.nvml import NvmlFailure, NvmlNotSupported


class FakeClock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


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
