"""Shared-prefix, long-context and trace prompts hold their stated token lengths and shared prefixes
exactly under the target's tokenizer (the embedded SmolLM2's tokenizer.json)."""

import json

import pytest
from tokenizers import Tokenizer

from probes.load.workloads.context import BuildContext
from probes.load.workloads.profiles import (
    LongContextProfile,
    SharedPrefixProfile,
    SyntheticProfile,
    TraceProfile,
)
from probes.load.workloads.registry import build_plan
from probes.load.workloads.trace import read_trace
from probes.load.workloads.workload import synthetic_prompts


def _ids(tok: Tokenizer, text: str) -> list[int]:
    return tok.encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize(("groups", "prefix", "suffix"), [(3, 90, 10), (2, 50, 50), (1, 0, 40)])
def test_prompts_share_exactly_the_prefix_tokens(tokenizer_json, groups, prefix, suffix):
    tok = Tokenizer.from_file(tokenizer_json)
    profile = SharedPrefixProfile(num_prefixes=groups, prefix_len=prefix, suffix_len=suffix)
    plan = build_plan(
        profile, BuildContext(count=12, seed=3, input_len=1, output_len=8, tokenizer_path=tokenizer_json)
    )
    ids = [_ids(tok, p) for p in plan.prompts]
    assert all(len(i) == prefix + suffix for i in ids)
    heads = {tuple(i[:prefix]) for i in ids}
    assert len(heads) == groups  # every prompt starts with one of G prefixes, token for token
    for head in heads:
        members = [i for i in ids if tuple(i[:prefix]) == head]
        assert len(members) == 12 // groups  # groups as even as the count allows
        assert len({tuple(i[prefix:]) for i in members}) == len(members)  # suffixes unique
    assert f"shared fraction {prefix / (prefix + suffix):.3f}" in plan.workload.length_method
    assert "exact" in plan.workload.length_method


def test_long_context_lengths_are_exact(tokenizer_json):
    tok = Tokenizer.from_file(tokenizer_json)
    plan = build_plan(
        LongContextProfile(document_len=700, question_len=20, output_len=4),
        BuildContext(count=4, seed=0, input_len=1, output_len=64, tokenizer_path=tokenizer_json),
    )
    assert [len(_ids(tok, p)) for p in plan.prompts] == [720] * 4
    assert plan.output_lens == [4] * 4
    assert len({p[:200] for p in plan.prompts}) == 4  # documents distinct: no prefix to cache


def test_trace_blocks_with_equal_hash_ids_are_equal_tokens(tokenizer_json, tmp_path):
    tok = Tokenizer.from_file(tokenizer_json)
    lines = [
        {"timestamp": 0, "input_length": 40, "output_length": 2, "hash_ids": [7, 8, 9]},
        {"timestamp": 5, "input_length": 40, "output_length": 2, "hash_ids": [7, 8, 11]},
        {"timestamp": 9, "input_length": 25, "output_length": 2, "hash_ids": [7, 12]},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    plan = build_plan(
        TraceProfile(path=str(path), block_size=16),
        BuildContext(count=10, seed=0, input_len=1, output_len=8, tokenizer_path=tokenizer_json),
    )
    a, b, c = (_ids(tok, p) for p in plan.prompts)
    assert (len(a), len(b), len(c)) == (40, 40, 25)
    assert a[:32] == b[:32] and a[32:] != b[32:]  # blocks 7 and 8 shared, 9 and 11 not
    assert a[:16] == c[:16] and a[16:25] != c[16:25]  # block 7 shared; c's tail (block 12) its own
    assert plan.offsets == [0.0, 0.005, 0.009]
    assert read_trace(str(path), 2)[1][1].hash_ids == (7, 8, 11)


def test_same_spec_and_seed_give_the_same_requests_and_synthetic_is_unchanged(tokenizer_json):
    ctx = BuildContext(count=20, seed=5, input_len=32, output_len=8, tokenizer_path=tokenizer_json)
    profile = SharedPrefixProfile(num_prefixes=2, prefix_len=20, suffix_len=12)
    one, two = build_plan(profile, ctx), build_plan(profile, ctx)
    assert one.prompts == two.prompts and one.workload == two.workload
    other = build_plan(profile, BuildContext(**{**ctx.__dict__, "seed": 6}))
    assert other.workload.prompts_digest != one.workload.prompts_digest
    # The default profile sends the prompts every earlier version sent: their digest is unchanged.
    plan = build_plan(SyntheticProfile(), ctx)
    prompts, old = synthetic_prompts(20, 32, 5, tokenizer_json)
    assert plan.prompts == prompts and plan.workload.prompts_digest == old.prompts_digest
    assert plan.workload.profile == "synthetic" and plan.workload.generator_version == "synthetic/1"


def test_words_a_tokenizer_splits_are_left_out(tmp_path):
    """A byte-level BPE trained on a few words only: the other common words split into pieces, so only the
    whole-word tokens may be drawn, and n drawn words are n tokens."""
    import numpy as np
    from tokenizers import ByteLevelBPETokenizer

    from probes.load.workloads.vocabulary import Vocabulary, join

    tok = ByteLevelBPETokenizer()
    whole = ["the", "of", "and", "to", "in", "is", "was", "for", "on", "are", "with", "as", "by", "at", "be",
             "this", "from", "that", "have", "or"]  # fmt: skip
    lines = [*whole, " " + " ".join(whole)] * 100  # each word alone and after a space
    tok.train_from_iterator(lines, vocab_size=256 + 120, min_frequency=2, show_progress=False)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    vocab = Vocabulary(str(path))
    assert set(vocab.words) <= set(whole) and len(vocab.words) >= 16
    trained = Tokenizer.from_file(str(path))
    text = join(vocab.draw(np.random.default_rng(0), 300))
    assert len(_ids(trained, text)) == 300
