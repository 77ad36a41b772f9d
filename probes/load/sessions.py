"""Driving chat sessions: each turn is sent after the previous reply (plus the think time) and carries
the system prompt, every earlier user turn and the server's actual replies, then the new user turn.

Closed loop: `concurrency` users, each running whole sessions one after another. Open loop: sessions
start at the arrival schedule (`rate` sessions/s); a later turn is scheduled at its previous reply's end
plus its think time, so its send lag is measured like any open-loop request's. A failed turn ends its
session (the later turns would carry a history the server never produced): those turns are not sent."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from probes.load.arrivals import arrival_offsets
from probes.load.records import RequestRecord
from probes.load.workloads.plan import SessionScript

# (record, messages, max_tokens) → the request, sent and answered (the runner's send).
Send = Callable[[RequestRecord, list[dict[str, str]], int], Awaitable[None]]


async def _session(script: SessionScript, start_s: float | None, run, send: Send, records: list) -> None:
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
        records.append(rec)
        await send(rec, messages, turn.max_tokens)
        if not rec.ok:
            return
        history = [*messages, {"role": "assistant", "content": rec.reply or ""}]
        if due is not None and k < len(script.turns):
            due = run.now() + script.turns[k].think_s


async def closed_sessions(scripts: list[SessionScript], point, run, send: Send) -> list[RequestRecord]:
    records: list[RequestRecord] = []
    queue = iter(scripts)

    async def user() -> None:
        for script in queue:
            if not run.may_send():
                return
            await _session(script, None, run, send, records)

    await asyncio.gather(*(user() for _ in range(point.concurrency or 1)))
    return sorted(records, key=lambda r: r.index)


async def open_sessions(scripts: list[SessionScript], point, run, send: Send) -> list[RequestRecord]:
    records: list[RequestRecord] = []
    offsets = arrival_offsets(len(scripts), point.rate, point.burstiness, point.seed)
    point.check_schedule(float(offsets[-1]) if len(offsets) else 0.0, "the sessions' start schedule")
    tasks = []
    for script, offset in zip(scripts, offsets, strict=True):
        if not await run.wait_until(offset):  # absolute schedule, as for single requests
            break
        tasks.append(asyncio.create_task(_session(script, float(offset), run, send, records)))
    await asyncio.gather(*tasks)
    return sorted(records, key=lambda r: r.index)
