"""Each workload names the system prompts it sends by digest (probes/load/workloads/plan.py): a chat-sessions
plan its one shared prompt, every other profile none; several runs' prompts merge by digest."""

from __future__ import annotations

import hashlib

from probes.load.workloads.context import BuildContext
from probes.load.workloads.plan import merged_prompts, system_prompts
from probes.load.workloads.profiles import ChatSessionsProfile, SyntheticProfile
from probes.load.workloads.registry import build_plan
from probes.load.workloads.workload import SystemPrompt


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_a_chat_sessions_plan_names_its_shared_system_prompt():
    plan = build_plan(
        ChatSessionsProfile(system_prompt_len=10, turns_min=2, turns_max=2), BuildContext(8, 3, 16, 4)
    )
    text = plan.sessions[0].system
    assert text and {s.system for s in plan.sessions} == {text}
    assert system_prompts(plan) == [SystemPrompt(sha256=sha(text), size_bytes=len(text.encode()), sessions=4)]


def test_no_system_prompt_is_an_empty_list():
    assert system_prompts(build_plan(SyntheticProfile(), BuildContext(4, 0, 16, 4))) == []
    none = build_plan(ChatSessionsProfile(system_prompt_len=0), BuildContext(4, 0, 16, 4))
    assert system_prompts(none) == []


def test_runs_merge_by_digest_and_an_unrecorded_run_makes_the_union_unknown():
    a = SystemPrompt(sha256=sha("a"), size_bytes=1, sessions=2)
    b = SystemPrompt(sha256=sha("b"), size_bytes=1, sessions=1)
    merged = merged_prompts([[a], [b, a.model_copy(update={"sessions": 3})], []])
    assert [(p.sha256, p.sessions) for p in merged] == [(sha("a"), 5), (sha("b"), 1)]
    assert merged_prompts([[a], None]) is None
    assert merged_prompts([]) == []
