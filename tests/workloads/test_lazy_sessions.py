"""chat-sessions scripts are drawn when each session is due, never held whole (issue 31 item 1), and are the
scripts the list-building code made, byte for byte: the digests below were recorded from that code (main at
df273c2, every script built before the run) for these parameters."""

import hashlib
import json
import pickle
import tracemalloc

import pytest

from probes.load.workloads import chat_sessions
from probes.load.workloads.chat_sessions import DrawnSessions
from probes.load.workloads.context import BuildContext
from probes.load.workloads.drawn import CHECKPOINT
from probes.load.workloads.plan import system_prompts
from probes.load.workloads.profiles import ChatSessionsProfile
from probes.load.workloads.registry import build_plan
from probes.load.workloads.workload import SystemPrompt

SPREAD = ChatSessionsProfile(
    system_prompt_len=12,
    turns_min=1,
    turns_max=7,
    user_turn_len=20,
    user_turn_spread=0.5,
    think_time_ms=300,
    think_time_distribution="exponential",
    output_len=5,
)
# (profile, context) → prompts digest, sessions, and the sha256 of every session's dump (`_dump`, one a
# line): as main at df273c2 built them
PINNED = [
    (
        ChatSessionsProfile(),
        BuildContext(700, 4, 20, 8),
        "sha256:23959be7757e0efed4ab4ee7e02f645f39377decf090368ad4babe6c4dce7a1d",
        238,
        "5ad138bde7b042987508345337a59d3a389d3714fed22368f721159c9529adee",
    ),
    (
        SPREAD,
        BuildContext(1500, 7, 20, 8),
        "sha256:6a56e1e984b602c7e20a27473bc554db398c326c7cbcee6ba699b41ce9d47639",
        390,
        "9ab7942475bfd06fbc166692a96f8b962465c00aa8283f2f96de945a4f539e6d",
    ),
    (  # 1,000 turns of 3: the last session cut to one turn; no system prompt
        ChatSessionsProfile(system_prompt_len=0, turns_min=3, turns_max=3, think_time_ms=50),
        BuildContext(1000, 1, 20, 8),
        "sha256:57e9d0c61922d454a5bcd61394c86fbd897ce5b22f0a9ffafa8f8a3c26fd476d",
        334,
        "403039f2fec26e125be6b97e25f96db1b9866bd3391af20403653e8e171d0e07",
    ),
]


def _dump(s) -> str:
    return json.dumps([s.session, s.system, [[t.index, t.user, t.max_tokens, t.think_s] for t in s.turns]])


def _digest(sessions) -> str:
    return hashlib.sha256("\n".join(_dump(s) for s in sessions).encode()).hexdigest()


@pytest.mark.parametrize(
    ("profile", "ctx", "digest", "count", "dumped"), PINNED, ids=["default", "spread", "cut"]
)
def test_sessions_drawn_when_due_are_the_listed_ones(profile, ctx, digest, count, dumped):
    plan = build_plan(profile, ctx)
    sessions = plan.sessions
    assert isinstance(sessions, DrawnSessions) and plan.workload.prompts_digest == digest
    assert len(sessions) == count and plan.count == plan.workload.num_prompts == ctx.count
    in_order = list(sessions)
    assert _digest(in_order) == dumped  # every session, its turns' request indexes, text and think times
    assert sum(len(s.turns) for s in in_order) == ctx.count
    # out of order (from the checkpoint before each), from the end, sliced, as worker 1 of 3 runs its share
    k = min(CHECKPOINT + 3, count // 2)
    assert sessions[count - 1] == in_order[-1] and sessions[k] == in_order[k]
    assert sessions[-2] == in_order[-2] and sessions[CHECKPOINT - 2 : CHECKPOINT + 2] == in_order[254:258]
    assert [sessions[i] for i in range(1, count, 3)] == in_order[1::3]
    assert list(pickle.loads(pickle.dumps(sessions))) == in_order  # as a worker process receives it
    assert build_plan(profile, ctx).sessions == sessions


def test_the_sessions_between_are_passed_over_without_making_their_words(monkeypatch):
    sessions = build_plan(SPREAD, BuildContext(1500, 7, 20, 8)).sessions
    in_order = list(pickle.loads(pickle.dumps(sessions)))
    made = []
    draw = chat_sessions.draw_words
    monkeypatch.setattr(chat_sessions, "draw_words", lambda w, rng, n: made.append(n) or draw(w, rng, n))
    fresh = pickle.loads(pickle.dumps(sessions))  # a worker's copy: the checkpoints, no stream in use
    k = CHECKPOINT + 100
    assert fresh[k] == in_order[k]
    assert len(made) == len(in_order[k].turns)  # only the asked-for session's user turns were made


def test_the_system_prompt_is_counted_once_per_session_without_drawing_again():
    plan = build_plan(SPREAD, BuildContext(1500, 7, 20, 8))
    system = plan.sessions[0].system
    expected = SystemPrompt(
        sha256="sha256:" + hashlib.sha256(system.encode()).hexdigest(),
        size_bytes=len(system.encode()),
        sessions=390,
    )
    assert system_prompts(plan) == [expected]
    assert system_prompts(build_plan(PINNED[2][0], PINNED[2][1])) == []  # no system prompt


TURNS = 20_000
# bytes. Measured for this plan (tracemalloc peak, 2-core host): 33.3 MiB with every script built up front
# (main at df273c2), under 0.1 MiB drawn when due (the stream's checkpoints)
BOUND = 2 * 2**20


@pytest.mark.system  # ~2 s: tracemalloc follows every allocation of 20,000 turns
def test_a_plan_of_20000_turns_holds_no_list_of_its_scripts():
    tracemalloc.start()
    try:
        plan = build_plan(ChatSessionsProfile(), BuildContext(TURNS, 0, 64, 8))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    sessions = plan.sessions
    assert len(sessions.states) == -(-len(sessions) // CHECKPOINT)
    # known truth: the text the scripts stand for (~10 MiB, estimated from every 100th session)
    text = sum(len(t.user) for i in range(0, len(sessions), 100) for t in sessions[i].turns) * 100
    assert text > 2 * BOUND
    assert peak < BOUND, f"peak {peak / 2**20:.1f} MiB for {TURNS:,} turns"
