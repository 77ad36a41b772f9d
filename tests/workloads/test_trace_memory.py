"""A trace's prompts are generated when each request is due, not held for the whole run (issue 31 item 1):
the memory of building a trace point and producing every request body stays bounded by one request."""

import json
import pickle
import tracemalloc

from probes.load.client import Endpoint
from probes.load.drive import WorkItem
from probes.load.workloads import trace
from probes.load.workloads.context import BuildContext
from probes.load.workloads.drawn import streamed_digest
from probes.load.workloads.plan import digest_json
from probes.load.workloads.profiles import TraceProfile
from probes.load.workloads.registry import build_plan
from probes.load.workloads.trace import TracePrompts, TraceRequest, _prompt, read_trace
from probes.load.workloads.vocabulary import Vocabulary

N, LENGTH = 2_000, 512
# bytes: a few requests' text and the trace's lines. Measured: 1.6 MiB here, 14.1 MiB before (main at 17153f6)
BOUND = 3 * 2**20


def _trace(tmp_path, n=N, length=LENGTH):
    path = tmp_path / "trace.jsonl"
    rows = [
        {"timestamp": 10 * i, "input_length": length, "output_length": 8, "hash_ids": [i % 5]}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_building_and_sending_a_trace_holds_one_prompt_at_a_time(tmp_path):
    path = _trace(tmp_path)
    profile, ctx = TraceProfile(path=str(path), block_size=64), BuildContext(N, 0, LENGTH, 8)
    work_of = lambda plan: WorkItem(Endpoint("http://h", "m"), plan, 8, keep_bodies=False)  # noqa: E731
    tracemalloc.start()
    try:
        plan = build_plan(profile, ctx)
        work = work_of(plan)
        sent = sum(len(work.body(i)) for i in range(N))  # every body, as a run builds them when due
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Known truth: what the run's text amounts to. Every version before this one held it twice over (the
    # materialised prompts, and the bodies it kept for the digest): the bodies alone are over the bound.
    assert sent > BOUND
    assert peak < BOUND, f"peak {peak / 2**20:.1f} MiB for {N} requests of {LENGTH} tokens"


def test_the_lazy_prompts_and_their_digest_are_those_of_the_materialised_list(tmp_path):
    path = _trace(tmp_path, n=40, length=150)
    _, reqs = read_trace(str(path), 40)
    words = Vocabulary(None).words
    materialised = [_prompt(r, i, words, 64, 3) for i, r in enumerate(reqs)]
    lazy = TracePrompts(reqs, words, 64, 3)
    assert list(lazy) == materialised and lazy[-1] == materialised[-1] and lazy[5:9] == materialised[5:9]
    # the digest a factsheet records is unchanged: that of json.dumps of the whole list
    assert streamed_digest(lazy) == digest_json(materialised)
    plan = build_plan(TraceProfile(path=str(path), block_size=64), BuildContext(40, 3, 150, 8))
    assert plan.workload.prompts_digest == digest_json(materialised)
    assert plan.prompts[7].split()[:64] == plan.prompts[12].split()[:64]  # i % 5 equal: one shared block


def test_recurring_blocks_are_drawn_once_and_the_cache_stays_bounded(monkeypatch):
    monkeypatch.setattr("probes.load.workloads.trace.BLOCK_CACHE", 4)
    words = Vocabulary(None).words
    # ids 0 and 1 recur in every request (a shared prefix); 100 + i is each request's own; 3 blocks of 16
    # cover the 40 tokens, so every word comes from a block
    reqs = [TraceRequest(10.0 * i, 40, 4, (0, 1, 100 + i)) for i in range(30)]
    expected = [_prompt(r, i, words, 16, 7) for i, r in enumerate(reqs)]
    draws = []
    draw = trace._draw
    monkeypatch.setattr(trace, "_draw", lambda *a: draws.append(1) or draw(*a))
    lazy = TracePrompts(reqs, words, 16, 7)
    assert list(lazy) == expected  # the same text
    assert len(draws) == 2 + 30  # the shared blocks once, each request's own once (90 without the cache)
    assert len(lazy._blocks) == 4 and {0, 1} <= set(lazy._blocks)  # at most BLOCK_CACHE, recurring kept
    assert pickle.loads(pickle.dumps(lazy))._blocks == {}  # a worker is sent the lines, not the cache
