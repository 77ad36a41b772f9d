"""`shared-prefix`: G groups of prompts sharing a P-token prefix, each with a unique S-token suffix
(vLLM `bench serve --dataset-name prefix_repetition`: prefix_len, suffix_len, num_prefixes)."""

from __future__ import annotations

from functools import partial

import numpy as np

from probes.load.workloads.context import BuildContext, stamped
from probes.load.workloads.drawn import DrawnPrompts
from probes.load.workloads.plan import Plan, digest_json
from probes.load.workloads.profiles import SharedPrefixProfile
from probes.load.workloads.vocabulary import Vocabulary, draw_words, join
from probes.load.workloads.workload import Workload

GENERATOR_VERSION = "shared-prefix/1"


def build(profile: SharedPrefixProfile, ctx: BuildContext) -> Plan:
    rng = np.random.default_rng(ctx.seed)
    vocab = Vocabulary(ctx.tokenizer_path)
    prefixes = [vocab.draw(rng, profile.prefix_len) for _ in range(profile.num_prefixes)]
    # Groups as even as the count allows, in a seed-shuffled order (vLLM shuffles too): a group's prompts
    # spread over the run, so its prefix is cached by the time most of them arrive, not all at once.
    groups = rng.permutation(np.arange(ctx.count) % profile.num_prefixes)
    # each prompt drawn when its request is due (DrawnPrompts): the prefixes and the groups are held, not the text
    prompts = DrawnPrompts(
        rng,
        ctx.count,
        partial(_prompt, vocab.words, prefixes, groups, profile.suffix_len),
        partial(_skip, len(vocab.words), profile.suffix_len),
    )
    out_len = profile.output_len or ctx.output_len
    p, s = profile.prefix_len, profile.suffix_len
    workload = Workload(
        prompts_digest=prompts.digest,
        input_len=p + s,
        length_method=(
            f"{profile.num_prefixes} prefixes of {p} tokens, each prompt one of them (seed-{ctx.seed} order) "
            f"plus a unique suffix of {s} tokens: shared fraction {profile.shared_fraction:.3f}; {vocab.method}"
        ),
        num_prompts=len(prompts),
        source="shared-prefix",
        output_lens_digest=digest_json([out_len] * len(prompts)),
        output_len_method=f"max_tokens {out_len}",
    )
    return Plan(prompts, [out_len] * len(prompts), stamped(workload, profile, GENERATOR_VERSION))


def _prompt(words: list[str], prefixes: list, groups: np.ndarray, suffix_len: int, rng, i: int) -> str:
    return join(prefixes[groups[i]], draw_words(words, rng, suffix_len))


def _skip(words: int, suffix_len: int, rng: np.random.Generator, i: int) -> None:
    rng.integers(0, words, size=suffix_len)  # _prompt's one draw from the stream (the suffix), no words made
