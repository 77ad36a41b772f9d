"""The warm-up round after a fresh start (probes/core/isolation.py WARM_UP_RULE), sent as the build sends it:
at the run's own load and shape, counted by the mock server's recording of what it received."""

from __future__ import annotations

import asyncio

import pytest

from probes.load.capacity import warm_up_point
from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.load.workloads.profiles import ChatSessionsProfile
from probes.targets.mock_server import MockServerConfig, Received, running

pytestmark = pytest.mark.system

TEMPLATE = LoadPoint.at(concurrency=1, num_requests=40, output_len=4, endpoint="chat", seed=3)
SLO_ = SLO(e2el_ms=5000, p99_metric="e2el_ms")
SESSIONS = ChatSessionsProfile(
    profile="chat-sessions", system_prompt_len=12, turns_min=2, turns_max=3, user_turn_len=6
)


def _sent(point: LoadPoint, profile=None) -> tuple[int, list[Received]]:
    received: list[Received] = []
    with running(MockServerConfig(model="m", ttft_ms=5, itl_ms=1), recorder=received) as url:
        result = asyncio.run(run_point(url, "m", point, SLO_, profile=profile))
    return result.metrics.completed, received


def test_a_closed_loop_warm_up_is_one_request_a_user_at_the_runs_shape():
    point = warm_up_point(TEMPLATE, "concurrency", 6, seed=999_003)
    assert (point.mode, point.concurrency, point.warmup_requests, point.seed) == ("closed", 6, 0, 999_003)
    completed, received = _sent(point)
    assert completed == 6 and len(received) == 6
    assert all(r.body["max_tokens"] == TEMPLATE.output_len for r in received)  # the run's own reply length


def test_a_chat_sessions_warm_up_runs_a_whole_session_a_user():
    """Each user of a chat-sessions run runs whole sessions: a round of one request a user is refused by the
    load runner (2 sessions for 6 users), so the warm-up is one session a user, turns_max turns."""
    point = warm_up_point(TEMPLATE, "concurrency", 6, seed=999_003, profile=SESSIONS)
    completed, received = _sent(point, SESSIONS)
    assert completed == len(received) == 6 * SESSIONS.turns_max


def test_an_open_loop_warm_up_is_one_second_of_arrivals():
    point = warm_up_point(TEMPLATE, "rate", 2.5, seed=999_003)
    assert (point.mode, point.rate, point.num_requests) == ("open", 2.5, 3)
    completed, received = _sent(point)
    assert completed == len(received) == 3
