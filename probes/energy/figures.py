"""Energy figures of the steady-state window: per component and total, gross and net of idle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from probes.core.measurement import Model, NotMeasured
from probes.energy.components import Component, Unavailable
from probes.energy.estimate import CpuPowerEstimate, estimate_cpu_power
from probes.energy.monitor import ComponentWindow, IdlePower, WindowEnergy
from probes.energy.spec import EnergyError, EnergySpec

Basis = Literal["measured", "estimated"]


class Quantity(Model):
    """One figure with its unit, definition and the count it rests on."""

    value: float
    unit: str
    definition: str
    n: int | None = Field(default=None, description="count the figure is divided by or rests on")


class EnergyFigures(Model):
    """Figures derived from one energy amount over the window."""

    energy_j: Quantity
    avg_power_w: Quantity
    j_per_request: Quantity | NotMeasured
    j_per_output_token: Quantity | NotMeasured
    wh_per_1000_requests: Quantity | NotMeasured
    output_tokens_per_j: Quantity | NotMeasured


class ComponentFigures(Model):
    component: Component
    basis: Basis
    gross: EnergyFigures
    idle_power_w: Quantity | NotMeasured
    net: EnergyFigures | NotMeasured = Field(description="gross minus idle power × window duration")
    samples_in_window: int
    counter_resets: int
    read_errors: int


class TotalFigures(Model):
    """Sum over the measured components; what is left out is named."""

    boundary: str
    included: list[str]
    excluded: list[str]
    gross: EnergyFigures
    idle_power_w: Quantity | NotMeasured
    net: EnergyFigures | NotMeasured


class EnergyResult(Model):
    """The factsheet's energy section."""

    t_start: float = Field(description="window start, epoch seconds")
    t_end: float = Field(description="window end, epoch seconds")
    duration_s: float
    requests: int = Field(ge=0, description="requests completed in the window (load probe)")
    output_tokens: int = Field(ge=0, description="output tokens generated in the window (load probe)")
    components: list[ComponentFigures | Unavailable]
    total: TotalFigures | NotMeasured = Field(description="measured components only")
    idle: IdlePower | NotMeasured
    estimated: list[ComponentFigures | Unavailable] = Field(
        default_factory=list, description="modelled components (only when the spec asks); never in the total"
    )

    def energy_kwh(self, basis: Basis = "measured") -> float | NotMeasured:
        """Gross energy in kWh: the measured total, or the sum of the estimated components."""
        if basis == "measured":
            if isinstance(self.total, NotMeasured):
                return self.total
            return self.total.gross.energy_j.value / 3.6e6
        estimated = [c for c in self.estimated if isinstance(c, ComponentFigures)]
        if not estimated:
            return NotMeasured(
                reason="no estimated component (energy.estimate is off or nothing could be modelled)"
            )
        return sum(c.gross.energy_j.value for c in estimated) / 3.6e6


def energy_figures(
    window: WindowEnergy,
    idle: IdlePower | NotMeasured,
    *,
    requests: int,
    output_tokens: int,
    config: EnergySpec,
    cpu_model: str | None = None,
) -> EnergyResult:
    """Per-component and total energy figures of the window; `cpu_model` only feeds the estimate."""
    if requests < 0 or output_tokens < 0:
        raise EnergyError(
            f"energy figures: requests ({requests}) and output_tokens ({output_tokens}) must be >= 0"
        )
    counts = _Counts(window.duration_s, requests, output_tokens)
    components = [_component_figures(c, idle, counts) for c in window.components]
    measured = [c for c in components if isinstance(c, ComponentFigures)]
    return EnergyResult(
        t_start=window.t_start,
        t_end=window.t_end,
        duration_s=window.duration_s,
        requests=requests,
        output_tokens=output_tokens,
        components=components,
        total=_total(measured, [c for c in components if isinstance(c, Unavailable)], counts),
        idle=idle,
        estimated=_estimated(measured, counts, cpu_model) if config.estimate else [],
    )


@dataclass(frozen=True)
class _Counts:
    duration_s: float
    requests: int
    output_tokens: int


def _component_figures(
    window: ComponentWindow, idle: IdlePower | NotMeasured, counts: _Counts
) -> ComponentFigures | Unavailable:
    if isinstance(window.energy_j, NotMeasured):
        return Unavailable(component=window.component, not_measured=window.energy_j)
    label = window.component.label
    idle_w = _idle_power(window.component, idle)
    return ComponentFigures(
        component=window.component,
        basis="measured",
        gross=_figures(window.energy_j, counts, f"{label}, gross"),
        idle_power_w=idle_w,
        net=_net(window.energy_j, idle_w, counts, label),
        samples_in_window=window.samples_in_window,
        counter_resets=window.counter_resets,
        read_errors=window.read_errors,
    )


def _idle_power(component: Component, idle: IdlePower | NotMeasured) -> Quantity | NotMeasured:
    if isinstance(idle, NotMeasured):
        return idle
    for c in idle.components:
        if (c.component.kind, c.component.index) == (component.kind, component.index):
            if isinstance(c.power_w, NotMeasured):
                return NotMeasured(reason=f"idle power of {component.label} not measured: {c.power_w.reason}")
            return Quantity(
                value=c.power_w,
                unit="W",
                definition=f"mean idle power of {component.label} over {idle.duration_s:g} s before the run",
                n=c.samples,
            )
    return NotMeasured(
        reason=f"idle power of {component.label} not measured: not present in the idle measurement"
    )


def _net(
    gross_j: float, idle_w: Quantity | NotMeasured, counts: _Counts, label: str
) -> EnergyFigures | NotMeasured:
    if isinstance(idle_w, NotMeasured):
        return NotMeasured(reason=f"net energy needs idle power: {idle_w.reason}")
    return _figures(gross_j - idle_w.value * counts.duration_s, counts, f"{label}, net of idle")


def _figures(energy_j: float, counts: _Counts, what: str) -> EnergyFigures:
    in_window = f"in the {counts.duration_s:g} s steady-state window"
    return EnergyFigures(
        energy_j=Quantity(value=energy_j, unit="J", definition=f"energy of {what} {in_window}"),
        avg_power_w=Quantity(
            value=energy_j / counts.duration_s, unit="W", definition=f"energy of {what} / window duration"
        ),
        j_per_request=_per(
            energy_j, counts.requests, "J/request", f"energy of {what} / requests completed", "requests"
        ),
        j_per_output_token=_per(
            energy_j, counts.output_tokens, "J/token", f"energy of {what} / output tokens", "output tokens"
        ),
        wh_per_1000_requests=_per(
            energy_j / 3.6,
            counts.requests,
            "Wh/1000 requests",
            f"energy of {what} in Wh × 1000 / requests",
            "requests",
        ),
        output_tokens_per_j=_tokens_per_j(energy_j, counts.output_tokens, what),
    )


def _per(amount: float, count: int, unit: str, definition: str, counted: str) -> Quantity | NotMeasured:
    if count == 0:
        return NotMeasured(reason=f"no {counted} in the window")
    return Quantity(value=amount / count, unit=unit, definition=definition + " in the window", n=count)


def _tokens_per_j(energy_j: float, tokens: int, what: str) -> Quantity | NotMeasured:
    if energy_j <= 0:
        return NotMeasured(reason=f"energy of {what} is not positive ({energy_j:g} J)")
    return Quantity(
        value=tokens / energy_j,
        unit="token/J",
        definition=f"output tokens / energy of {what} in the window",
        n=tokens,
    )


def _total(
    measured: list[ComponentFigures], missing: list[Unavailable], counts: _Counts
) -> TotalFigures | NotMeasured:
    if not measured:
        reasons = "; ".join(f"{u.component.label}: {u.not_measured.reason}" for u in missing)
        return NotMeasured(
            reason=f"no component measured ({reasons})" if reasons else "no component measured"
        )
    labels = [c.component.label for c in measured]
    gross_j = sum(c.gross.energy_j.value for c in measured)
    idle_w = _total_idle(measured)
    return TotalFigures(
        boundary="sum of " + ", ".join(labels),
        included=labels,
        excluded=[u.component.label for u in missing],
        gross=_figures(gross_j, counts, "measured components, gross"),
        idle_power_w=idle_w,
        net=_net(gross_j, idle_w, counts, "measured components"),
    )


def _total_idle(measured: list[ComponentFigures]) -> Quantity | NotMeasured:
    for c in measured:
        if isinstance(c.idle_power_w, NotMeasured):
            return c.idle_power_w
    return Quantity(
        value=sum(c.idle_power_w.value for c in measured),
        unit="W",
        definition="sum of the measured components' mean idle power before the run",
        n=min(c.idle_power_w.n or 0 for c in measured),
    )


def _estimated(
    measured: list[ComponentFigures], counts: _Counts, cpu_model: str | None
) -> list[ComponentFigures | Unavailable]:
    if any(c.component.kind == "cpu_package" for c in measured):
        return []  # measured CPU energy makes an estimate pointless
    estimate = estimate_cpu_power(cpu_model)
    component = _estimate_component(estimate)
    if isinstance(estimate, NotMeasured):
        return [Unavailable(component=component, not_measured=estimate)]
    energy_j = estimate.power_w * counts.duration_s
    no_idle = NotMeasured(reason="a TDP-based estimate has no idle baseline")
    return [
        ComponentFigures(
            component=component,
            basis="estimated",
            gross=_figures(energy_j, counts, "CPU (estimated)"),
            idle_power_w=no_idle,
            net=no_idle,
            samples_in_window=0,
            counter_resets=0,
            read_errors=0,
        )
    ]


def _estimate_component(estimate: CpuPowerEstimate | NotMeasured) -> Component:
    found = isinstance(estimate, CpuPowerEstimate)
    return Component(
        kind="cpu_package",
        index=None,
        label="CPU (estimated)",
        source=estimate.source if found else "codecarbon data/hardware/cpu_power.csv",
        boundary="the CPU as modelled from its TDP; not a measurement",
        method=(
            f"{estimate.method}: '{estimate.cpu_model}' matched '{estimate.matched_name}', TDP {estimate.tdp_w:g} W,"
            f" {estimate.power_w:g} W × window duration"
            if found
            else "CodeCarbon constant mode: fraction of TDP × window duration"
        ),
    )
