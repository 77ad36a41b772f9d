"""The state one sending process keeps while it drives a point: its clock and whether to go on sending, and
the point's request bodies. The single-process runner and each worker process (probes/load/workers) share it."""

from __future__ import annotations

import asyncio
import hashlib
import time

from probes.core.digests import prefixed
from probes.load.client import Endpoint, begin_body, request_body
from probes.load.point import LoadPoint
from probes.load.records import RequestRecord
from probes.load.workloads.plan import Plan

# Longest sleep between two looks at whether the run was aborted (target gone, saturated) while it waits
# for the next send: shorter waits are slept whole, so a send is never later than it was.
WAKE_S = 0.5


class RunState:
    """Shared state of one run: its clock origin and whether the target has gone away."""

    def __init__(self, point: LoadPoint, t0: float):
        self.point = point
        self.t0 = t0
        self.connect_failures = 0  # consecutive
        self.aborted: str | None = None
        self.saturated: str | None = None  # set by the scraper's thread (stop_when_saturated)
        self.deadline_hit = False

    def now(self) -> float:
        return time.perf_counter() - self.t0

    def may_send(self) -> bool:
        if self.point.duration_s is not None and self.now() >= self.point.duration_s:
            self.deadline_hit = True
        return self.aborted is None and self.saturated is None and not self.deadline_hit

    async def wait_until(self, t: float) -> bool:
        """Sleep until run time `t` or until sending must end, whichever is earlier: the deadline
        (duration_s) is slept to, never past, and an abort or saturation is noticed within WAKE_S. True
        when `t` has come and sending may go on. A 1 h gap in a trace under `duration_s=5` ends at 5 s."""
        while self.may_send():
            now = self.now()
            if now >= t:
                return True
            end = t if self.point.duration_s is None else min(t, self.point.duration_s)
            if end - now > WAKE_S:
                await asyncio.sleep(WAKE_S)
                continue
            await asyncio.sleep(end - now)
            if end == t:  # slept to the send time: send now, as a single sleep always did (no second look)
                return self.may_send()
        return False

    def observe(self, rec: RequestRecord) -> None:
        if rec.error_kind != "connect":
            self.connect_failures = 0
            return
        self.connect_failures += 1
        if self.connect_failures >= self.point.max_connect_failures and self.aborted is None:
            self.aborted = (
                f"target unreachable: {self.connect_failures} consecutive connection failures "
                f"(last: {rec.error})"
            )


class WorkItem:
    """The plan's requests as bytes, built when each is sent. Only chat sessions keep the bodies they sent
    (their replies are in them); for independent requests (`keep_bodies=False`) the requests digest is of
    the bodies rebuilt from the plan for the records' indexes (`digest_of`), so memory does not grow with
    the run's length."""

    def __init__(self, endpoint: Endpoint, plan: Plan, output_len: int, keep_bodies: bool = True):
        self.endpoint, self.plan, self.output_len = endpoint, plan, output_len
        self.sent: dict[int, bytes] = {}
        self.keep_bodies = keep_bodies

    def body(self, i: int) -> bytes:
        prompts, lens = self.plan.prompts, self.plan.output_lens
        max_tokens = lens[i % len(lens)] if lens else self.output_len
        return self.keep(i, request_body(self.endpoint, prompts[i % len(prompts)], max_tokens))

    def keep(self, i: int, body: bytes) -> bytes:
        if self.keep_bodies:
            self.sent[i] = body
        return body

    def digest(self) -> str:
        return _digest(self.sent[i] for i in sorted(self.sent))

    def digest_of(self, indexes: list[int]) -> str:
        """The digest `digest()` gives had these requests' bodies been kept (independent requests only)."""
        return _digest(self.body(i) for i in sorted(indexes))


def _digest(bodies) -> str:
    h = hashlib.sha256()
    for body in bodies:
        h.update(body + b"\n")
    return prefixed(h.hexdigest())


async def send_request(client, endpoint, work: WorkItem, rec: RequestRecord, run: RunState) -> None:
    body = work.body(rec.index)
    # Stamped once the body is built (a trace's prompt is generated now): sent_s is when its bytes begin
    # to leave, and building it is the client's time, never the server's (it lands in send lag, not TTFT).
    rec.sent_s = run.now()
    await begin_body(client, endpoint, body, rec, run.t0)
    run.observe(rec)
