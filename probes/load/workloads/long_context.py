"""`long-context`: RAG-like prompts, a long distinct document then a short question, and a short answer."""

from __future__ import annotations

import numpy as np

from probes.load.workload import Workload
from probes.load.workloads.context import BuildContext, stamped
from probes.load.workloads.plan import Plan, digest_json
from probes.load.workloads.profiles import LongContextProfile
from probes.load.workloads.vocabulary import Vocabulary, join

GENERATOR_VERSION = "long-context/1"


def build(profile: LongContextProfile, ctx: BuildContext) -> Plan:
    rng = np.random.default_rng(ctx.seed)
    vocab = Vocabulary(ctx.tokenizer_path)
    d, q = profile.document_len, profile.question_len
    # Every document distinct: a long-context point measures prefill, not the prefix cache.
    prompts = [join(vocab.draw(rng, d), vocab.draw(rng, q)) for _ in range(ctx.count)]
    out_len = profile.output_len or ctx.output_len
    workload = Workload(
        prompts_digest=digest_json(prompts),
        input_len=d + q,
        length_method=f"a distinct {d}-token document then a {q}-token question; {vocab.method}",
        num_prompts=len(prompts),
        source="long-context",
        output_lens_digest=digest_json([out_len] * len(prompts)),
        output_len_method=f"max_tokens {out_len}",
    )
    return Plan(prompts, [out_len] * len(prompts), stamped(workload, profile, GENERATOR_VERSION))
