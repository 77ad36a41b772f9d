"""A fake powercap sysfs tree: intel-rapl zones whose `energy_uj` counters follow a known energy in joules,
wrapped at `max_energy_range_uj` like the hardware. Set by hand (`set_time`) for the energy probe's own
tests, or at each read's own time stamp (`wall_clock_counter`) under a real build."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from probes.energy.rapl import RaplChannel

EnergyOfTime = Callable[[float], float]


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
            # Written aside then renamed: a reader in another thread never sees a half-written counter.
            tmp = zone / ".energy_uj"
            tmp.write_text(f"{round(energy(t) * 1e6) % max_range}\n")
            tmp.replace(zone / "energy_uj")


@contextmanager
def wall_clock_counter(root: Path, watts: float) -> Iterator[Path]:
    """A RAPL package counter (`intel-rapl:0`, package-0) under `root` at `watts` of the energy monitor's own
    clock while the block runs; yields `root` (a spec's `energy.powercap_root`). The counter is set to
    watts × t at the very stamp t each read is made at, so the truth is this function of the monitor's clock,
    not a writer thread that a busy host holds back."""
    powercap = FakePowercap(root)
    zone = powercap.add_zone("intel-rapl:0", "package-0", watts=watts)
    original = RaplChannel.read

    def read(channel: RaplChannel, t: float) -> float:
        if channel.zone == zone:
            powercap.set_time(t)
        return original(channel, t)

    with mock.patch.object(RaplChannel, "read", read):
        yield root
