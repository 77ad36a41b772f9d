"""Load from many worker processes, one measurement: one event loop per core (uvloop where installed), the
point's one schedule (open loop) or one population of users (closed loop) split across them, their records
merged into one list in request order with the worker that sent each."""

from probes.load.workers.check import LOOP_RULE, ClientCheck, ClockOffset, WorkerCheck
from probes.load.workers.fleet import (
    Executor,
    Fleet,
    Outcome,
    Workers,
    WorkersError,
    check_split,
    host_cores,
    resolve_workers,
)

__all__ = [
    "LOOP_RULE",
    "ClientCheck",
    "ClockOffset",
    "Executor",
    "Fleet",
    "Outcome",
    "WorkerCheck",
    "Workers",
    "WorkersError",
    "check_split",
    "host_cores",
    "resolve_workers",
]
