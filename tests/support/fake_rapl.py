"""A fake powercap sysfs tree: intel-rapl zones whose `energy_uj` counters follow a known energy in joules,
wrapped at `max_energy_range_uj` like the hardware. Set by hand (`set_time`) for the energy probe's own
tests, or advanced by wall-clock time (`wall_clock_counter`) under a real build."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

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
    """A RAPL package counter (`intel-rapl:0`, package-0) under `root` advancing at `watts` of wall-clock
    time, every 5 ms, while the block runs; yields `root` (a spec's `energy.powercap_root`)."""
    powercap = FakePowercap(root)
    powercap.add_zone("intel-rapl:0", "package-0", watts=watts)
    t0, stop = time.time(), threading.Event()

    def advance() -> None:
        while not stop.is_set():
            powercap.set_time(time.time() - t0)
            time.sleep(0.005)

    thread = threading.Thread(target=advance, daemon=True)
    thread.start()
    try:
        yield root
    finally:
        stop.set()
        thread.join()
