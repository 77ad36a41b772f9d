"""long-context and shared-prefix prompts are drawn when each request is due (issue 31 item 1), and are the
prompts their generators' version 1 drew into a list: the digests below were recorded from that code
(main at 17153f6) for these parameters."""

import pickle
import tracemalloc

import pytest

from probes.load.workloads import drawn
from probes.load.workloads.context import BuildContext
from probes.load.workloads.profiles import LongContextProfile, SharedPrefixProfile
from probes.load.workloads.registry import build_plan

CTX = BuildContext(700, 5, 64, 8)
PINNED = [
    (
        LongContextProfile(document_len=300, question_len=20),
        "sha256:75aaad810c8279048188e67d9dec7d46f24b121fe19c21366994bd9d1b2c9e37",
        "that know in through more than has her would know we more ge",
    ),
    (
        SharedPrefixProfile(num_prefixes=3, prefix_len=50, suffix_len=30),
        "sha256:403b53d83e8b04fc9ad774f9331db4bd6d2efd4ab4dc1005cc89fe1a8516c766",
        "back are know know so about same too over out but man there ",
    ),
]


@pytest.mark.parametrize(("profile", "digest", "start_613"), PINNED, ids=["long-context", "shared-prefix"])
def test_prompts_drawn_when_due_are_version_1s(profile, digest, start_613):
    plan = build_plan(profile, CTX)
    assert plan.workload.prompts_digest == digest  # the whole list, as version 1 drew it
    prompts = plan.prompts
    assert prompts[613][:60] == start_613  # out of order: from the checkpoint before it
    in_order = list(prompts)
    assert in_order[613] == prompts[613] and prompts[-1] == in_order[-1] and prompts[2:5] == in_order[2:5]
    assert list(pickle.loads(pickle.dumps(prompts))) == in_order  # as a worker process receives it


def test_drawing_a_long_context_point_holds_a_state_per_checkpoint_not_the_text(monkeypatch):
    monkeypatch.setattr(drawn, "CHECKPOINT", 64)
    n = 1_000
    profile = LongContextProfile(document_len=1_000, question_len=20)
    tracemalloc.start()
    try:
        plan = build_plan(profile, BuildContext(n, 0, 64, 8))
        text = sum(len(p) for p in plan.prompts)  # every prompt, as a run draws them in order
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(plan.prompts.states) == -(-n // 64)
    # known truth: the text is ~5 MB; held as a list (version 1), the peak was above it
    assert text > 4 * 2**20
    assert peak < 1.5 * 2**20, f"peak {peak / 2**20:.2f} MiB"


@pytest.mark.parametrize(("profile", "digest", "start_613"), PINNED, ids=["long-context", "shared-prefix"])
def test_a_prompt_drawn_after_skipping_is_the_one_drawn_in_order(profile, digest, start_613):
    """The prompts between a checkpoint and the one asked for are skipped (their random draws only, no
    words made), as a worker that sends every W-th request passes over the others: the prompt is the one
    drawn in order, and none of those between was made."""
    prompts = build_plan(profile, CTX).prompts
    in_order = list(pickle.loads(pickle.dumps(prompts)))
    made, skipped = [], []
    fresh = pickle.loads(pickle.dumps(prompts))  # a worker's copy: the checkpoints, no stream in use
    draw, skip = fresh.draw, fresh.skip
    fresh.draw = lambda rng, i: made.append(i) or draw(rng, i)
    fresh.skip = lambda rng, i: skipped.append(i) or skip(rng, i)
    k = drawn.CHECKPOINT + 200
    assert fresh[k] == in_order[k]
    assert made == [k] and skipped == list(range(drawn.CHECKPOINT, k))
    # as worker 2 of 3 draws its share: every third prompt, the two between each skipped
    made.clear()
    worker = fresh
    worker._rng = None  # as sent to a worker process: no stream in use
    assert [worker[i] for i in range(2, len(in_order), 3)] == in_order[2::3]
    assert made == list(range(2, len(in_order), 3))
    assert in_order[613][:60] == start_613
