"""GPU energy through NVML, behind a small seam so tests can inject a fake binding."""

from __future__ import annotations

from typing import Protocol

import pynvml

from probes.energy.components import ChannelReadError, Component, EnergyChannel, Unavailable, unavailable

_BOUNDARY = "the GPU board as reported by NVML (GPU, its memory and board power delivery); excludes host"
_COUNTER_METHOD = (
    "difference of the NVML total-energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ) interpolated"
    " linearly at the window edges"
)
_POWER_METHOD = (
    "trapezoidal integration of NVML board power (nvmlDeviceGetPowerUsage, mW) sampled in the background;"
    " this GPU has no total-energy counter"
)


class NvmlFailure(RuntimeError):
    """An NVML call failed."""


class NvmlLibraryMissing(NvmlFailure):
    """The NVML shared library could not be loaded."""


class NvmlNotSupported(NvmlFailure):
    """The device does not support the queried NVML function."""


class NvmlBinding(Protocol):
    """The NVML calls the probe needs; indices are NVML device indices."""

    def init(self) -> None: ...

    def device_count(self) -> int: ...

    def device_name(self, index: int) -> str: ...

    def total_energy_mj(self, index: int) -> int: ...

    def power_mw(self, index: int) -> int: ...


class PynvmlBinding:
    """NvmlBinding over `pynvml` (the nvidia-ml-py distribution)."""

    def __init__(self) -> None:
        self._nvml = pynvml
        self._handles: dict[int, object] = {}

    def init(self) -> None:
        self._call(self._nvml.nvmlInit)

    def device_count(self) -> int:
        return int(self._call(self._nvml.nvmlDeviceGetCount))

    def device_name(self, index: int) -> str:
        name = self._call(self._nvml.nvmlDeviceGetName, self._handle(index))
        return name.decode() if isinstance(name, bytes) else str(name)

    def total_energy_mj(self, index: int) -> int:
        return int(self._call(self._nvml.nvmlDeviceGetTotalEnergyConsumption, self._handle(index)))

    def power_mw(self, index: int) -> int:
        return int(self._call(self._nvml.nvmlDeviceGetPowerUsage, self._handle(index)))

    def _handle(self, index: int) -> object:
        if index not in self._handles:
            self._handles[index] = self._call(self._nvml.nvmlDeviceGetHandleByIndex, index)
        return self._handles[index]

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except self._nvml.NVMLError_LibraryNotFound as err:
            raise NvmlLibraryMissing(str(err)) from err
        except self._nvml.NVMLError_NotSupported as err:
            raise NvmlNotSupported(str(err)) from err
        except self._nvml.NVMLError as err:
            raise NvmlFailure(str(err)) from err


class NvmlEnergyChannel:
    """Cumulative energy from the NVML total-energy counter."""

    def __init__(self, nvml: NvmlBinding, index: int, component: Component) -> None:
        self.component = component
        self.resets = 0
        self._nvml = nvml
        self._index = index
        self._last_mj: int | None = None
        self._total_mj = 0

    def read(self, t: float) -> float:
        try:
            raw = self._nvml.total_energy_mj(self._index)
        except NvmlFailure as err:
            raise ChannelReadError(f"nvmlDeviceGetTotalEnergyConsumption failed: {err}") from err
        if self._last_mj is not None:
            delta = raw - self._last_mj
            if delta < 0:
                # The counter restarted (driver reload); energy since then is the new reading.
                delta = raw
                self.resets += 1
            self._total_mj += delta
        self._last_mj = raw
        return self._total_mj / 1e3


class NvmlPowerChannel:
    """Cumulative energy from trapezoidal integration of sampled NVML power."""

    def __init__(self, nvml: NvmlBinding, index: int, component: Component) -> None:
        self.component = component
        self.resets = 0
        self._nvml = nvml
        self._index = index
        self._last: tuple[float, float] | None = None
        self._total_j = 0.0

    def read(self, t: float) -> float:
        try:
            watts = self._nvml.power_mw(self._index) / 1e3
        except NvmlFailure as err:
            raise ChannelReadError(f"nvmlDeviceGetPowerUsage failed: {err}") from err
        if self._last is not None:
            last_t, last_w = self._last
            self._total_j += (watts + last_w) / 2 * (t - last_t)
        self._last = (t, watts)
        return self._total_j


def discover_gpus(nvml: NvmlBinding | None) -> list[EnergyChannel | Unavailable]:
    """One channel per NVML device (counter, else power integration), or why there is none.

    `nvml` None means the real pynvml binding.
    """
    try:
        nvml = nvml if nvml is not None else PynvmlBinding()
        nvml.init()
    except ImportError as err:
        return [_missing(f"no NVML library: {err}")]
    except NvmlLibraryMissing as err:
        return [_missing(f"no NVML library: {err}")]
    except NvmlFailure as err:
        return [_missing(f"NVML init failed: {err}")]
    try:
        count = nvml.device_count()
    except NvmlFailure as err:
        return [_missing(f"nvmlDeviceGetCount failed: {err}")]
    if count == 0:
        return [_missing("no NVML device")]
    return [_open(nvml, index) for index in range(count)]


def gpu_disabled() -> Unavailable:
    return _missing("GPU measurement disabled (energy.gpu = false)")


def _open(nvml: NvmlBinding, index: int) -> EnergyChannel | Unavailable:
    try:
        name = nvml.device_name(index)
    except NvmlFailure as err:
        return unavailable(_component(index, f"GPU {index}", _COUNTER_METHOD), f"device name failed: {err}")
    label = f"GPU {index} ({name})"
    try:
        nvml.total_energy_mj(index)
        return NvmlEnergyChannel(nvml, index, _component(index, label, _COUNTER_METHOD))
    except NvmlNotSupported:
        pass
    except NvmlFailure as err:
        reason = f"nvmlDeviceGetTotalEnergyConsumption failed: {err}"
        return unavailable(_component(index, label, _COUNTER_METHOD), reason)
    try:
        nvml.power_mw(index)
    except NvmlFailure as err:
        reason = f"no total-energy counter and nvmlDeviceGetPowerUsage failed: {err}"
        return unavailable(_component(index, label, _POWER_METHOD), reason)
    return NvmlPowerChannel(nvml, index, _component(index, label, _POWER_METHOD))


def _component(index: int | None, label: str, method: str) -> Component:
    source = "NVML" if index is None else f"NVML device {index}"
    return Component(kind="gpu", index=index, label=label, source=source, boundary=_BOUNDARY, method=method)


def _missing(reason: str) -> Unavailable:
    return unavailable(_component(None, "GPU", _COUNTER_METHOD), reason)
