"""What a measured component is, and the channel interface every energy source implements."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import ConfigDict, Field

from probes.core.measurement import Model, NotMeasured

ComponentKind = Literal["gpu", "cpu_package", "dram"]


class Component(Model):
    """One thing whose energy is reported, with what the figure covers and how it is obtained."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ComponentKind
    index: int | None = Field(description="device / package index; None when the kind was not found at all")
    label: str
    source: str = Field(description="where the reading comes from (sysfs path, NVML device)")
    boundary: str = Field(description="what the energy figure covers")
    method: str = Field(description="how the energy figure is obtained")


class Unavailable(Model):
    """A component that cannot be measured on this machine."""

    component: Component
    not_measured: NotMeasured


class ChannelReadError(RuntimeError):
    """A single reading of a channel failed; the sampler counts it and carries on."""


class EnergyChannel(Protocol):
    """A source of cumulative energy for one component."""

    component: Component
    resets: int

    def read(self, t: float) -> float:
        """Cumulative joules since the first read, at epoch time `t`; raises ChannelReadError."""
        ...


def unavailable(component: Component, reason: str) -> Unavailable:
    return Unavailable(component=component, not_measured=NotMeasured(reason=reason))
