"""Driving chat sessions: each turn is sent after the previous reply (plus the think time) and carries
the system prompt, every earlier user turn and the server's actual replies, then the new user turn.

Closed loop: `concurrency` users, each running whole sessions one after another. Open loop: sessions
start at the arrival schedule (`rate` sessions/s); a later turn is scheduled at its previous reply's end
plus its think time, so its send lag is measured like any open-loop request's. A failed turn ends its
session (the later turns would carry a history the server never produced): those turns are not sent."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from probes.load.arrivals import arrival_offsets
from probes.load.records import RequestRecord
from probes.load.workloads.plan import SessionScript

# (record, messages, max_tokens) → the request, sent and answered (the runner's or a worker's send, which
# also keeps the record: in a list, or streamed to the worker's records file).
Send = Callable[[RequestRecord, list[dict[str, str]], int], Awaitable[None]]


async def _session(script: SessionScript, start_s: float | None, run, send: Send) -> None:
    history: list[dict[str, str]] = [{"role": "system", "content": script.system}] if script.system else []
    due = start_s
    for k, turn in enumerate(script.turns, 1):
        if k > 1 and turn.think_s > 0:
            # the think time, never slept past the run's deadline or an abort
            if not await run.wait_until(due if due is not None else run.now() + turn.think_s):
                return
        if not run.may_send():
            return
        messages = [*history, {"role": "user", "content": turn.user}]
        rec = RequestRecord(
            index=turn.index, scheduled_s=due, sent_s=run.now(), session=script.session, turn=k
        )
        await send(rec, messages, turn.max_tokens)
        if not rec.ok:
            return
        history = [*messages, {"role": "assistant", "content": rec.reply or ""}]
        if due is not None and k < len(script.turns):
            due = run.now() + script.turns[k].think_s


async def closed_sessions(
    scripts: Sequence[SessionScript], users: int, run, send: Send, take: Callable[[], int | None]
) -> None:
    """`users` users, each running whole sessions one after another: the next session is `take()`'s (one
    counter for one process; across worker processes, one counter they share, so the population of users
    is one, whichever worker holds them). A session's turns stay with its user."""

    async def user() -> None:
        while run.may_send():
            s = take()
            if s is None:
                return
            await _session(scripts[s], None, run, send)

    await asyncio.gather(*(user() for _ in range(users)))


def session_starts(sessions: int, point) -> list[float]:
    """The open loop's one absolute schedule of session starts (s from the run's t0), checked against the
    point's bounds before anything is sent."""
    offsets = arrival_offsets(sessions, point.rate, point.burstiness, point.seed)
    point.check_schedule(float(offsets[-1]) if len(offsets) else 0.0, "the sessions' start schedule")
    return offsets.tolist()


async def open_sessions(
    scripts: Sequence[SessionScript], starts: list[float], mine: range, run, send: Send
) -> None:
    """The sessions in `mine` (all of them, or a worker's every W-th) started at their time in `starts`;
    only the sessions in flight are held."""
    in_flight: set[asyncio.Task] = set()
    for s in mine:
        script = scripts[s]  # drawn before its start: drawing it is not in its send lag
        if not await run.wait_until(starts[s]):  # absolute schedule, as for single requests
            break
        task = asyncio.create_task(_session(script, starts[s], run, send))
        in_flight.add(task)
        task.add_done_callback(in_flight.discard)
    await asyncio.gather(*in_flight)
