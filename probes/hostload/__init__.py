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

__all__ = ["BUSY_RULE", "HOST_LOAD_METHOD", "HostLoad", "HostLoadMeter", "Snapshot", "between", "snapshot"]
