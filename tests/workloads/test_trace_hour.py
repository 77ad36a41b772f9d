"""An hour of a conversation trace at Mooncake's scale plans within a small memory bound, its prompts made one at
a time when due (issue 41 item 6). The real Mooncake conversation trace is not available offline here, so the
trace is generated with its shape (bench/trace_hour.py's hour_trace): 12,000 requests over one hour, ~11,300
prompt tokens a request (136,101,620 in all, over the 134,217,728 = 2^27 a run was once limited to), hash_ids
of 512-token blocks with a shared conversation prefix."""

import pytest

from bench.trace_hour import BLOCK, REQUESTS, SPAN_MS, hour_trace
from probes.load.workloads.context import BuildContext
from probes.load.workloads.plan import digest_json
from probes.load.workloads.profiles import TraceProfile
from probes.load.workloads.registry import build_plan
from probes.load.workloads.trace import _prompt, read_trace
from probes.load.workloads.vocabulary import Vocabulary
from tests.support.peak_memory import growth

OLD_LIMIT = 1 << 27
# bytes the planning process's resident set may grow by: the lines (~5 MiB), BLOCK_CACHE blocks' words (~4 MiB)
# and one prompt's text. Measured 22 MiB (tracemalloc: 18.1 MiB); the text the run sends is ~800 MB.
BOUND = 48 * 2**20
# The plan's digest of all 12,000 prompts (seed 0), pinned: the word-by-word generator before (main at 292d459,
# its run limit lifted) gave this digest, and so does the block-by-block one now; any change in the text is seen.
HOUR_DIGEST = "sha256:30e05a7ad726683e6757c8f80f5e1d3f03b007403a263eff06a0ed62d2ef2578"
CHECKED = (*range(20), REQUESTS - 1)


@pytest.mark.system  # ~15 s: 136 M tokens drawn once for the digest, in a process of its own
def test_an_hour_of_trace_over_the_old_token_limit_plans_in_bounded_memory(tmp_path):
    path = tmp_path / "conversation_hour.jsonl"
    assert hour_trace(path) > OLD_LIMIT  # known truth: the old limit refused this trace
    grew, result = growth(
        setup=f"""
            from probes.load.workloads.context import BuildContext
            from probes.load.workloads.profiles import TraceProfile
            from probes.load.workloads.registry import build_plan
            from probes.load.workloads.trace import _prompt, read_trace
            from probes.load.workloads.vocabulary import Vocabulary
            # what any plan loads once (lazy imports, the vocabulary) is not the plan's
            build_plan(TraceProfile(path={str(path)!r}, block_size={BLOCK}), BuildContext(2, 0, 8, 8))
            """,
        work=f"""
            profile = TraceProfile(path={str(path)!r}, block_size={BLOCK}, time_scale=0.02)
            plan = build_plan(profile, BuildContext({REQUESTS}, 0, 8, 8))
            """,
        # drawn when due = drawn up front: the first and last requests' prompts, as the eager generator makes them
        after=f"""
            _, reqs = read_trace({str(path)!r}, {REQUESTS})
            words = Vocabulary(None).words
            result = {{
                "n": len(plan.prompts), "last_offset": plan.offsets[-1],
                "digest": plan.workload.prompts_digest,
                "as_eager": [plan.prompts[i] == _prompt(reqs[i], i, words, {BLOCK}, 0) for i in {CHECKED}],
                "lengths": [[len(plan.prompts[i].split()), reqs[i].input_length] for i in {CHECKED}],
            }}
            """,
    )  # fmt: skip
    assert grew < BOUND, f"resident set grew {grew / 2**20:.1f} MiB while planning"
    assert result["n"] == REQUESTS and result["last_offset"] == pytest.approx(SPAN_MS / 1000 * 0.02)
    assert result["digest"] == HOUR_DIGEST
    assert result["as_eager"] == [True] * len(CHECKED)
    assert all(words == tokens for words, tokens in result["lengths"])


def test_lazy_trace_prompts_digest_as_the_eager_list(tmp_path):
    path = tmp_path / "head.jsonl"
    hour_trace(path, n=60)
    _, reqs = read_trace(str(path), 60)
    words = Vocabulary(None).words
    eager = [_prompt(r, i, words, BLOCK, 3) for i, r in enumerate(reqs)]
    plan = build_plan(TraceProfile(path=str(path), block_size=BLOCK), BuildContext(60, 3, 8, 8))
    assert plan.workload.prompts_digest == digest_json(eager)
    assert list(plan.prompts) == eager
