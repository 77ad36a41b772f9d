"""RAPL discovery and counter unwrapping on a fake powercap tree."""

from __future__ import annotations

import pytest

from probes.energy.components import Unavailable
from probes.energy.rapl import RaplChannel, discover_rapl
from tests.support.fake_rapl import FakePowercap


@pytest.fixture
def powercap(tmp_path) -> FakePowercap:
    return FakePowercap(tmp_path / "powercap")


def _reasons(found) -> dict[str, str]:
    return {u.component.label: u.not_measured.reason for u in found if isinstance(u, Unavailable)}


def test_package_and_dram_domains_become_channels(powercap):
    powercap.add_zone("intel-rapl:0", "package-0", watts=40)
    powercap.add_zone("intel-rapl:0/intel-rapl:0:0", "core", watts=30)
    powercap.add_zone("intel-rapl:0/intel-rapl:0:1", "dram", watts=5)
    powercap.add_zone("intel-rapl:1", "package-1", watts=40)
    found = discover_rapl(powercap.root)
    channels = [f for f in found if isinstance(f, RaplChannel)]
    assert [c.component.label for c in channels] == ["CPU package 0", "DRAM 0", "CPU package 1"]
    assert _reasons(found) == {"DRAM 1": "no dram domain under intel-rapl:1"}
    assert channels[1].component.source.endswith("intel-rapl:0/intel-rapl:0:1")


def test_counter_difference_in_joules(powercap):
    powercap.add_zone("intel-rapl:0", "package-0", watts=40)
    (channel,) = [f for f in discover_rapl(powercap.root) if isinstance(f, RaplChannel)]
    assert channel.read(0.0) == 0.0
    powercap.set_time(2.5)
    assert channel.read(2.5) == pytest.approx(100.0)


def test_wrap_around_uses_max_energy_range(powercap):
    # 60 W with a 100 J counter range: the counter wraps between the 1.5 s and 2.0 s readings.
    powercap.add_zone("intel-rapl:0", "package-0", watts=60, max_range_uj=100_000_000)
    (channel,) = [f for f in discover_rapl(powercap.root) if isinstance(f, RaplChannel)]
    readings = []
    for t in (0.0, 0.5, 1.0, 1.5, 2.0, 2.5):
        powercap.set_time(t)
        readings.append(channel.read(t))
    assert readings == pytest.approx([0, 30, 60, 90, 120, 150])
    assert channel.resets == 1


def test_missing_root_names_the_path(tmp_path):
    found = discover_rapl(tmp_path / "nope")
    assert _reasons(found) == {
        "CPU package": f"{tmp_path / 'nope'} not present",
        "DRAM": f"{tmp_path / 'nope'} not present",
    }


def test_root_without_rapl_zones(powercap):
    (powercap.root / "dtpm").mkdir(parents=True)
    reasons = _reasons(discover_rapl(powercap.root))
    assert reasons["CPU package"].startswith(f"no RAPL package zone under {powercap.root}")


def test_unreadable_counter_reports_the_os_error(powercap):
    zone = powercap.add_zone("intel-rapl:0", "package-0", watts=40)
    (zone / "energy_uj").unlink()
    (zone / "energy_uj").mkdir()  # reading a directory fails like an unreadable file, even as root
    reasons = _reasons(discover_rapl(powercap.root))
    assert reasons["CPU package 0"] == "intel-rapl:0/energy_uj not readable: Is a directory"


def test_amd_zone_prefix_is_recognised(powercap):
    powercap.add_zone("amd-rapl:0", "package-0", watts=40)
    found = discover_rapl(powercap.root)
    assert [f.component.label for f in found if isinstance(f, RaplChannel)] == ["CPU package 0"]
