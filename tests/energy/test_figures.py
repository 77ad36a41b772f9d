"""energy_figures on windows with known energy: per-request, per-token, net of idle, totals, estimates."""

from __future__ import annotations

import csv

import pytest

from probes.core.measurement import NotMeasured
from probes.energy import (
    Component,
    ComponentFigures,
    ComponentWindow,
    EnergyError,
    EnergySpec,
    IdlePower,
    Unavailable,
    WindowEnergy,
    energy_figures,
)
from probes.energy.codecarbon_data import data_file
from probes.energy.monitor import ComponentIdle


def _component(kind: str, index: int | None, label: str) -> Component:
    return Component(kind=kind, index=index, label=label, source="test", boundary="b", method="m")


GPU = _component("gpu", 0, "GPU 0")
CPU = _component("cpu_package", 0, "CPU package 0")
DRAM = _component("dram", None, "DRAM")


def _window(energies: dict[Component, float | NotMeasured], duration: float = 2.0) -> WindowEnergy:
    return WindowEnergy(
        t_start=100.0,
        t_end=100.0 + duration,
        duration_s=duration,
        sample_interval_s=0.1,
        components=[
            ComponentWindow(component=c, energy_j=e, samples_in_window=20, counter_resets=0, read_errors=0)
            for c, e in energies.items()
        ],
    )


def _idle(powers: dict[Component, float | NotMeasured]) -> IdlePower:
    return IdlePower(
        t_start=80.0,
        t_end=90.0,
        duration_s=10.0,
        components=[ComponentIdle(component=c, power_w=p, samples=100) for c, p in powers.items()],
    )


def _by_label(result, label: str):
    return next(c for c in result.components if c.component.label == label)


def test_per_request_and_per_token_figures():
    window = _window({GPU: 100.0, CPU: 60.0})
    result = energy_figures(
        window, _idle({GPU: 20.0, CPU: 10.0}), requests=4, output_tokens=50, config=EnergySpec()
    )
    gpu = _by_label(result, "GPU 0")
    assert gpu.basis == "measured"
    assert gpu.gross.energy_j.value == 100.0
    assert gpu.gross.avg_power_w.value == pytest.approx(50.0)
    assert gpu.gross.j_per_request.value == pytest.approx(25.0)
    assert gpu.gross.j_per_request.n == 4
    assert gpu.gross.j_per_output_token.value == pytest.approx(2.0)
    assert gpu.gross.wh_per_1000_requests.value == pytest.approx(100 / 3600 / 4 * 1000)
    assert gpu.gross.output_tokens_per_j.value == pytest.approx(0.5)
    # net = 100 J - 20 W × 2 s
    assert gpu.idle_power_w.value == 20.0
    assert gpu.net.energy_j.value == pytest.approx(60.0)
    assert gpu.net.j_per_output_token.value == pytest.approx(1.2)
    assert result.total.included == ["GPU 0", "CPU package 0"]
    assert result.total.gross.energy_j.value == pytest.approx(160.0)
    assert result.total.idle_power_w.value == pytest.approx(30.0)
    assert result.total.net.energy_j.value == pytest.approx(100.0)
    assert result.energy_kwh() == pytest.approx(160.0 / 3.6e6)


def test_unmeasured_component_keeps_its_reason_and_is_left_out_of_the_total():
    reason = NotMeasured(reason="no dram domain under intel-rapl:0")
    result = energy_figures(
        _window({CPU: 60.0, DRAM: reason}),
        _idle({CPU: 10.0, DRAM: reason}),
        requests=1,
        output_tokens=1,
        config=EnergySpec(),
    )
    dram = _by_label(result, "DRAM")
    assert isinstance(dram, Unavailable)
    assert dram.not_measured.reason == "no dram domain under intel-rapl:0"
    assert result.total.excluded == ["DRAM"]
    assert result.total.gross.energy_j.value == 60.0


def test_without_idle_net_is_not_measured_with_the_idle_reason():
    idle = NotMeasured(reason="idle power not measured: energy.idle_s = 0")
    result = energy_figures(_window({GPU: 100.0}), idle, requests=2, output_tokens=10, config=EnergySpec())
    gpu = _by_label(result, "GPU 0")
    assert gpu.net.reason == "net energy needs idle power: idle power not measured: energy.idle_s = 0"
    assert result.total.net.reason == gpu.net.reason
    assert result.idle == idle


def test_no_requests_makes_per_request_figures_not_measured():
    result = energy_figures(
        _window({GPU: 100.0}), _idle({GPU: 20.0}), requests=0, output_tokens=0, config=EnergySpec()
    )
    gross = _by_label(result, "GPU 0").gross
    assert gross.j_per_request.reason == "no requests in the window"
    assert gross.j_per_output_token.reason == "no output tokens in the window"
    assert gross.output_tokens_per_j.value == 0.0


def test_nothing_measured_gives_reasons_for_every_component():
    window = _window({GPU: NotMeasured(reason="no NVML device"), CPU: NotMeasured(reason="/x not present")})
    result = energy_figures(
        window, NotMeasured(reason="idle: none"), requests=3, output_tokens=9, config=EnergySpec()
    )
    assert all(isinstance(c, Unavailable) for c in result.components)
    assert (
        result.total.reason == "no component measured (GPU 0: no NVML device; CPU package 0: /x not present)"
    )
    assert isinstance(result.energy_kwh(), NotMeasured)
    assert result.estimated == []


def test_negative_counts_are_rejected():
    with pytest.raises(EnergyError, match="requests"):
        energy_figures(
            _window({GPU: 1.0}), _idle({GPU: 1.0}), requests=-1, output_tokens=0, config=EnergySpec()
        )


def _tdp_in_file(name: str) -> float:
    with data_file("data/hardware/cpu_power.csv").open(encoding="utf-8-sig", newline="") as f:
        return next(float(r["TDP"]) for r in csv.DictReader(f) if r["Name"] == name)


def test_estimate_only_when_asked_and_labelled():
    window = _window({GPU: 100.0, CPU: NotMeasured(reason="/sys/class/powercap not present")})
    model = "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz"
    plain = energy_figures(
        window, _idle({GPU: 20.0}), requests=2, output_tokens=8, config=EnergySpec(), cpu_model=model
    )
    assert plain.estimated == []
    asked = energy_figures(
        window,
        _idle({GPU: 20.0}),
        requests=2,
        output_tokens=8,
        config=EnergySpec(estimate=True),
        cpu_model=model,
    )
    (cpu,) = asked.estimated
    assert isinstance(cpu, ComponentFigures) and cpu.basis == "estimated"
    tdp = _tdp_in_file("Intel Xeon Gold 6130")
    assert cpu.gross.avg_power_w.value == pytest.approx(0.5 * tdp)
    assert cpu.gross.energy_j.value == pytest.approx(0.5 * tdp * 2.0)
    assert "CodeCarbon constant mode" in cpu.component.method
    # the estimate never enters the measured total
    assert asked.total.gross.energy_j.value == 100.0
    assert asked.energy_kwh("estimated") == pytest.approx(0.5 * tdp * 2.0 / 3.6e6)


def test_estimate_with_an_ambiguous_model_is_not_measured():
    window = _window({CPU: NotMeasured(reason="/sys/class/powercap not present")})
    result = energy_figures(
        window,
        _idle({}),
        requests=1,
        output_tokens=1,
        config=EnergySpec(estimate=True),
        cpu_model="AMD EPYC",
    )
    (cpu,) = result.estimated
    assert "matches" in cpu.not_measured.reason and "none uniquely" in cpu.not_measured.reason


def test_estimate_skipped_when_cpu_is_measured():
    result = energy_figures(
        _window({CPU: 60.0}),
        _idle({CPU: 10.0}),
        requests=1,
        output_tokens=1,
        config=EnergySpec(estimate=True),
        cpu_model="Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz",
    )
    assert result.estimated == []


def test_result_round_trips_through_json():
    window = _window({GPU: 100.0, CPU: NotMeasured(reason="/sys/class/powercap not present")})
    result = energy_figures(
        window,
        _idle({GPU: 20.0}),
        requests=2,
        output_tokens=8,
        config=EnergySpec(estimate=True),
        cpu_model="Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz",
    )
    assert type(result).model_validate_json(result.model_dump_json()) == result
