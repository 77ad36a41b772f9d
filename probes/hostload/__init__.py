"""The host's own load over a run: CPU used by other processes and steal, from /proc (issue 28, item 6)."""

from probes.hostload.meter import (
    BUSY_RULE,
    HOST_LOAD_METHOD,
    HostLoad,
    HostLoadMeter,
    Snapshot,
    between,
    snapshot,
)
from probes.hostload.speed import HOST_SPEED_METHOD, HostSpeed, host_speed

__all__ = [
    "BUSY_RULE",
    "HOST_LOAD_METHOD",
    "HOST_SPEED_METHOD",
    "HostLoad",
    "HostLoadMeter",
    "HostSpeed",
    "Snapshot",
    "between",
    "host_speed",
    "snapshot",
]
