"""`long-context`: RAG-like prompts, a long distinct document then a short question, and a short answer."""

from __future__ import annotations

from functools import partial

import numpy as np

from probes.load.workloads.context import BuildContext, stamped
from probes.load.workloads.drawn import DrawnPrompts
from probes.load.workloads.plan import Plan, digest_json
from probes.load.workloads.profiles import LongContextProfile
from probes.load.workloads.vocabulary import Vocabulary, draw_words, join
from probes.load.workloads.workload import Workload

GENERATOR_VERSION = "long-context/1"


def build(profile: LongContextProfile, ctx: BuildContext) -> Plan:
    rng = np.random.default_rng(ctx.seed)
    vocab = Vocabulary(ctx.tokenizer_path)
    d, q = profile.document_len, profile.question_len
    # Every document distinct: a long-context point measures prefill, not the prefix cache. Each is drawn
    # when its request is due (DrawnPrompts), never all held.
    prompts = DrawnPrompts(
        rng, ctx.count, partial(_prompt, vocab.words, d, q), partial(_skip, len(vocab.words), d, q)
    )
    out_len = profile.output_len or ctx.output_len
    workload = Workload(
        prompts_digest=prompts.digest,
        input_len=d + q,
        length_method=f"a distinct {d}-token document then a {q}-token question; {vocab.method}",
        num_prompts=len(prompts),
        source="long-context",
        output_lens_digest=digest_json([out_len] * len(prompts)),
        output_len_method=f"max_tokens {out_len}",
    )
    return Plan(prompts, [out_len] * len(prompts), stamped(workload, profile, GENERATOR_VERSION))


def _prompt(words: list[str], d: int, q: int, rng: np.random.Generator, i: int) -> str:
    return join(draw_words(words, rng, d), draw_words(words, rng, q))


def _skip(words: int, d: int, q: int, rng: np.random.Generator, i: int) -> None:
    # _prompt's two draws from the stream (draw_words's), without their words: a worker passes over the
    # other workers' prompts between a checkpoint and its own at the cost of the draws alone
    rng.integers(0, words, size=d)
    rng.integers(0, words, size=q)
