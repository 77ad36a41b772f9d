"""The state one sending process keeps while it drives a point: its clock and whether to go on sending, and
the point's request bodies. The single-process runner and each worker process (probes/load/workers) share it."""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from typing import IO

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
    """The plan's requests as bytes, built when each is sent. For independent requests (`keep_bodies=False`)
    the requests digest is of the bodies rebuilt from the plan for the records' indexes (`digest_of`), so
    memory does not grow with the run's length. Chat sessions' bodies carry the server's replies and cannot
    be rebuilt: each is appended to `log` as it is sent (SentBodies; a temporary file when none is given)."""

    def __init__(
        self,
        endpoint: Endpoint,
        plan: Plan,
        output_len: int,
        keep_bodies: bool = True,
        log: IO[bytes] | None = None,
    ):
        self.endpoint, self.plan, self.output_len = endpoint, plan, output_len
        self.keep_bodies = keep_bodies
        self.sent = SentBodies(log if log is not None else tempfile.TemporaryFile()) if keep_bodies else None

    def max_tokens(self, i: int) -> int:
        """The reply length request `i` asks for."""
        lens = self.plan.output_lens
        return lens[i % len(lens)] if lens else self.output_len

    def body(self, i: int) -> bytes:
        prompts = self.plan.prompts
        return self.keep(i, request_body(self.endpoint, prompts[i % len(prompts)], self.max_tokens(i)))

    def keep(self, i: int, body: bytes) -> bytes:
        if self.sent is not None:
            self.sent.add(i, body)
        return body

    def digest_of(self, indexes: list[int]) -> str:
        """The digest of these requests' bodies, in index order: as logged when kept, else rebuilt."""
        if self.sent is not None:
            return bodies_digest([self.sent.out], indexes)
        return _digest(self.body(i) for i in sorted(indexes))


class SentBodies:
    """Bodies appended to a file as each is sent, each after a line "index length": a turn's body holds the
    whole conversation so far, so a run's bodies are held on disk, never in memory, until their digest."""

    def __init__(self, out: IO[bytes]):
        self.out = out

    def add(self, i: int, body: bytes) -> None:
        self.out.write(b"%d %d\n" % (i, len(body)) + body)  # one write: a worker that dies leaves whole ones


def bodies_digest(files: list[IO[bytes]], indexes: Iterable[int]) -> str:
    """The requests digest of the bodies logged in `files` (SentBodies) for `indexes`, in index order, read
    back one at a time. Only the records' requests count: a worker that died may have logged a body whose
    request it never finished, and a body its death cut short is not read."""
    wanted, places = set(indexes), []
    for k, f in enumerate(files):
        f.flush()
        size = f.seek(0, os.SEEK_END)
        f.seek(0)
        while (head := f.readline()).endswith(b"\n"):
            i, n = (int(x) for x in head.split())
            at = f.tell()
            if at + n > size:
                break
            if i in wanted:
                places.append((i, k, at, n))
            f.seek(n, os.SEEK_CUR)

    def bodies() -> Iterator[bytes]:
        for _, k, at, n in sorted(places):
            files[k].seek(at)
            yield files[k].read(n)

    return _digest(bodies())


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
    await begin_body(client, endpoint, body, rec, run.t0, work.max_tokens(rec.index))
    run.observe(rec)


async def send_turn(
    client, endpoint, work: WorkItem, rec: RequestRecord, messages: list[dict[str, str]], max_tokens: int, run
) -> None:
    """A chat session's turn: its body (the conversation so far, with the server's replies) kept for the
    requests digest, then sent and read."""
    body = work.keep(rec.index, request_body(endpoint, messages, max_tokens))
    rec.sent_s = run.now()  # as send_request: once the body (the whole conversation so far) is built
    await begin_body(client, endpoint, body, rec, run.t0, max_tokens)
    run.observe(rec)
