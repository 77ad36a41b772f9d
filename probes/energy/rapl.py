"""CPU package and DRAM energy from RAPL through the powercap sysfs interface."""

from __future__ import annotations

import re
from pathlib import Path

from probes.energy.components import ChannelReadError, Component, EnergyChannel, Unavailable, unavailable

_ZONE = re.compile(r"^(intel|amd)-rapl:(\d+)$")
_SUBZONE = re.compile(r"^(intel|amd)-rapl:\d+:\d+$")
_PACKAGE_NAME = re.compile(r"^package-(\d+)$")
_METHOD = (
    "difference of the RAPL energy_uj counter (µJ) interpolated linearly at the window edges,"
    " wrap-around corrected with max_energy_range_uj"
)
_PACKAGE_BOUNDARY = (
    "CPU package (cores, caches, uncore) as reported by RAPL; excludes DRAM, GPU, rest of node"
)
_DRAM_BOUNDARY = "DRAM attached to the CPU package as reported by RAPL"


class RaplChannel:
    """Cumulative energy of one RAPL domain, unwrapping the counter."""

    def __init__(self, zone: Path, component: Component, max_range_uj: int) -> None:
        self.component = component
        self.resets = 0
        self.zone = zone
        self._energy_file = zone / "energy_uj"
        self._max_range_uj = max_range_uj
        self._last_uj: int | None = None
        self._total_uj = 0

    def read(self, t: float) -> float:
        raw = self._read_uj()
        if self._last_uj is not None:
            delta = raw - self._last_uj
            if delta < 0:
                # The counter wrapped past max_energy_range_uj back to zero.
                delta += self._max_range_uj
                self.resets += 1
            self._total_uj += delta
        self._last_uj = raw
        return self._total_uj / 1e6

    def _read_uj(self) -> int:
        try:
            return int(self._energy_file.read_text().strip())
        except (OSError, ValueError) as err:
            raise ChannelReadError(f"{self._energy_file}: {err}") from err


def discover_rapl(root: str | Path) -> list[EnergyChannel | Unavailable]:
    """One channel per readable package / DRAM domain, or why none can be read."""
    root = Path(root)
    if not root.is_dir():
        return [_missing("cpu_package", f"{root} not present"), _missing("dram", f"{root} not present")]
    zones = sorted((p for p in root.iterdir() if _ZONE.match(p.name)), key=lambda p: _zone_number(p.name))
    packages = [z for z in zones if _PACKAGE_NAME.match(_read_name(z))]
    if not packages:
        reason = f"no RAPL package zone under {root} (no intel-rapl:N / amd-rapl:N with name package-N)"
        return [_missing("cpu_package", reason), _missing("dram", reason)]
    found: list[EnergyChannel | Unavailable] = []
    for zone in packages:
        found.extend(_package_channels(zone))
    return found


def _package_channels(zone: Path) -> list[EnergyChannel | Unavailable]:
    index = int(_PACKAGE_NAME.match(_read_name(zone)).group(1))
    package = _component("cpu_package", index, zone)
    found = [_open(zone, package)]
    drams = [s for s in sorted(zone.iterdir()) if _SUBZONE.match(s.name) and _read_name(s) == "dram"]
    if drams:
        found.append(_open(drams[0], _component("dram", index, drams[0])))
    else:
        dram = _component("dram", index, zone)
        found.append(unavailable(dram, f"no dram domain under {zone.name}"))
    return found


def _open(zone: Path, component: Component) -> EnergyChannel | Unavailable:
    for file in ("energy_uj", "max_energy_range_uj"):
        try:
            int((zone / file).read_text().strip())
        except OSError as err:
            return unavailable(component, f"{zone.name}/{file} not readable: {err.strerror}")
        except ValueError:
            return unavailable(component, f"{zone.name}/{file} does not hold an integer")
    max_range = int((zone / "max_energy_range_uj").read_text().strip())
    return RaplChannel(zone, component, max_range)


def _component(kind: str, index: int | None, zone: Path | None) -> Component:
    is_package = kind == "cpu_package"
    name = "CPU package" if is_package else "DRAM"
    return Component(
        kind=kind,
        index=index,
        label=name if index is None else f"{name} {index}",
        source=str(zone) if zone is not None else "RAPL powercap sysfs",
        boundary=_PACKAGE_BOUNDARY if is_package else _DRAM_BOUNDARY,
        method=_METHOD,
    )


def _missing(kind: str, reason: str) -> Unavailable:
    return unavailable(_component(kind, None, None), reason)


def _read_name(zone: Path) -> str:
    try:
        return (zone / "name").read_text().strip()
    except OSError:
        return ""


def _zone_number(name: str) -> int:
    return int(_ZONE.match(name).group(2))
