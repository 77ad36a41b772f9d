"""Chat sessions and trace replay against the recording mock server (known replies, known timing)."""

import asyncio
import json
import sys

import pytest

from probes.core.digests import sha256_bytes
from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.load.workloads.chat_sessions import scripts
from probes.load.workloads.context import BuildContext
from probes.load.workloads.profiles import ChatSessionsProfile, SharedPrefixProfile, TraceProfile
from probes.load.workloads.registry import build_plan
from probes.targets.mock_server import MockServerConfig, Received, running

from .conftest import EXAMPLE_TRACE

pytestmark = pytest.mark.system

TTFT_MS = 40.0


def _run(point: LoadPoint, profile, **server):
    cfg = MockServerConfig(ttft_ms=TTFT_MS, itl_ms=2.0, numbered_replies=True, **server)
    received: list[Received] = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)  # server thread and client share the GIL (see tests/load/loadharness.py)
    try:
        with running(cfg, recorder=received) as url:
            result = asyncio.run(run_point(url, cfg.model, point, SLO(), profile=profile))
    finally:
        sys.setswitchinterval(interval)
    return result, received


CHAT = ChatSessionsProfile(system_prompt_len=12, turns_min=2, turns_max=4, user_turn_len=6, output_len=3)


def test_turn_k_carries_turns_1_to_k_minus_1_with_the_replies_the_server_sent():
    point = LoadPoint(mode="closed", concurrency=3, num_requests=20, endpoint="chat", output_len=3)
    result, received = _run(point, CHAT)
    script = scripts(CHAT, BuildContext(20, 0, 128, 3))
    by_user = {t.user: (s, k) for s in script for k, t in enumerate(s.turns, 1)}
    reply_to = {json.dumps(r.body["messages"][-1]["content"]): r.reply for r in received}
    assert len(received) == 20 and all(r.reply for r in received)
    for r in received:
        messages = r.body["messages"]
        session, k = by_user[messages[-1]["content"]]
        assert messages[0] == {"role": "system", "content": session.system}
        history = messages[1:-1]
        assert len(history) == 2 * (k - 1)
        for j in range(k - 1):
            user, assistant = history[2 * j], history[2 * j + 1]
            assert user == {"role": "user", "content": session.turns[j].user}
            # The exact reply the server streamed for that earlier turn, not a placeholder.
            assert assistant == {"role": "assistant", "content": reply_to[json.dumps(user["content"])]}
    # Records carry session and turn; figures by turn exist for every turn index sent.
    recs = result.records
    assert {(r.session, r.turn) for r in recs} == {
        (s.session, k) for s in script for k in range(1, len(s.turns) + 1)
    }
    turns = {t.turn: t for t in result.turns}
    assert set(turns) == {r.turn for r in recs}
    assert sum(t.sent for t in turns.values()) == 20
    assert all(t.ttft_ms.p(50) >= TTFT_MS for t in turns.values())  # the server's known first-token delay
    assert turns[1].ttft_ci["p50"].n == turns[1].ttft_ms.n
    assert result.workload.profile == "chat-sessions" and result.workload.requests_digest


def test_one_user_sends_byte_identical_sessions_twice():
    point = LoadPoint(mode="closed", concurrency=1, num_requests=7, endpoint="chat", output_len=3)
    one, _ = _run(point, CHAT)
    two, _ = _run(point, CHAT)
    assert one.workload.requests_digest == two.workload.requests_digest
    assert one.workload.prompts_digest == two.workload.prompts_digest
    other = point.model_copy(update={"seed": 1})
    assert _run(other, CHAT)[0].workload.requests_digest != one.workload.requests_digest


def test_open_loop_sessions_schedule_later_turns_after_the_think_time():
    profile = CHAT.model_copy(update={"think_time_ms": 60.0})
    point = LoadPoint(
        mode="open", rate=20.0, burstiness=float("inf"), num_requests=12, endpoint="chat", output_len=3
    )
    result, received = _run(point, profile)
    later = [r for r in result.records if r.turn > 1]
    assert later and all(r.scheduled_s is not None for r in later)
    prev = {(r.session, r.turn): r for r in result.records}
    for r in later:
        # Scheduled at the previous reply's end plus the think time; sent within 20 ms of it.
        assert r.scheduled_s >= prev[(r.session, r.turn - 1)].end_s + 0.06 - 1e-3
        assert 0 <= r.send_lag_s < 0.02
    assert result.arrivals is not None and result.arrivals.send_lag_ms.n == 12


def test_chat_sessions_refuse_the_completions_endpoint():
    from probes.load.runner import LoadProbeError

    with pytest.raises(LoadProbeError, match="chat endpoint"):
        _run(LoadPoint(mode="closed", concurrency=1, num_requests=2), CHAT)


def test_a_closed_loop_with_fewer_sessions_than_users_is_refused():
    """4 turns of 2-turn-or-longer sessions are at most 2 sessions: 2 of the 4 users would idle, and the
    point would run below the concurrency it states."""
    from probes.load.runner import LoadProbeError

    point = LoadPoint(mode="closed", concurrency=4, num_requests=4, endpoint="chat", output_len=3)
    with pytest.raises(LoadProbeError, match="make 2 sessions for 4 users"):
        _run(point, CHAT)


LAG_MS = 20.0  # stated bound: the client sends each request within this of its scheduled time


def test_trace_replays_on_schedule():
    profile = TraceProfile(path=str(EXAMPLE_TRACE), time_scale=0.5, block_size=32)
    point = LoadPoint(mode="open", rate=1.0, num_requests=24, output_len=8)
    result, received = _run(point, profile)
    lines = [json.loads(x) for x in EXAMPLE_TRACE.read_text().splitlines()]
    schedule = [(x["timestamp"] - lines[0]["timestamp"]) / 1000 * 0.5 for x in lines]
    assert [r.scheduled_s for r in result.records] == pytest.approx(schedule)
    # Judged by what the tool measures: never sent before its time, and within the stated lag of it. The
    # server's receive clock (a thread beside the client) is held only to order and count: trace gaps are
    # >= 50 ms here, so sends within the lag bound leave in trace order by 30 ms or more.
    assert all(r.send_lag_s is not None and r.send_lag_s >= 0 for r in result.records)
    assert [r.body["max_tokens"] for r in sorted(received, key=lambda r: r.at_s)] == [
        x["output_length"] for x in lines
    ]
    a = result.arrivals
    assert a.send_lag_ms.n == 24 and a.send_lag_ms.p(99) < LAG_MS
    assert a.achieved_fraction == pytest.approx(1.0, abs=0.02)
    assert a.scheduled_rate == pytest.approx(23 / schedule[-1])
    assert result.workload.profile == "trace" and result.workload.file_digest.startswith("sha256:")
    assert result.workload.parameters.path == "example.jsonl"  # by name, never the machine path


def test_requests_digest_is_the_digest_of_the_bodies_the_server_received():
    profile = SharedPrefixProfile(num_prefixes=2, prefix_len=8, suffix_len=4, output_len=2)
    point = LoadPoint(mode="closed", concurrency=4, num_requests=16, output_len=2)
    one, received = _run(point, profile)
    two, _ = _run(point, profile)
    assert one.workload.requests_digest == two.workload.requests_digest
    # In request-index order (the plan's prompt order), each body as received, newline after each.
    plan = build_plan(profile, BuildContext(16, 0, point.input_len, 2))
    ordered = sorted(received, key=lambda r: plan.prompts.index(r.body["prompt"]))
    assert len(ordered) == 16 and len({r.body["prompt"] for r in ordered}) == 16
    expected = sha256_bytes(b"".join(json.dumps(r.body).encode() + b"\n" for r in ordered))
    assert one.workload.requests_digest == expected


def test_probe_load_runs_a_profile_and_prints_ttft_by_turn(tmp_path):
    from typer.testing import CliRunner

    from factsheet.cli.probe import probe_app

    out = tmp_path / "o"
    with running(MockServerConfig(ttft_ms=20, itl_ms=2, numbered_replies=True)) as url:
        res = CliRunner().invoke(
            probe_app,
            ["load", "--base-url", url, "--model", "mock-model", "--endpoint", "chat", "--concurrency", "2",
             "--num-prompts", "9", "--workload", "chat-sessions", "--workload-option", "turns_min=3",
             "--workload-option", "turns_max=3", "--workload-option", "output_len=2", "-o", str(out)],
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "turn 1: ttft p50" in res.output and "turn 3: ttft p50" in res.output
    doc = json.loads((out / "result.json").read_text())
    assert doc["workload"]["profile"] == "chat-sessions" and len(doc["turns"]) == 3
    assert doc["point"]["output_len"] == 2
