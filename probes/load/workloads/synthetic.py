"""`synthetic`: independent prompts of random common words (the default, unchanged since 1.0)."""

from __future__ import annotations

from probes.load.workloads.context import BuildContext, stamped
from probes.load.workloads.plan import Plan
from probes.load.workloads.profiles import SyntheticProfile
from probes.load.workloads.workload import WorkloadConfig, synthetic_prompts, synthetic_workload

# 1: the generator of probes/load/workloads/workload.py as of schema 1.0 (its prompts digests stay comparable).
GENERATOR_VERSION = "synthetic/1"


def build(profile: SyntheticProfile, ctx: BuildContext) -> Plan:
    if profile.length_distribution == "fixed":
        # Exactly the prompts an earlier version sent (max_tokens = the point's output_len).
        prompts, workload = synthetic_prompts(
            ctx.count, ctx.input_len, ctx.seed, ctx.tokenizer_path, ctx.output_len
        )
        return Plan(prompts, None, stamped(workload, profile, GENERATOR_VERSION))
    built = synthetic_workload(workload_config(profile, ctx), ctx.count)
    return Plan(built.prompts, built.output_lens, stamped(built.workload, profile, GENERATOR_VERSION))


def workload_config(profile: SyntheticProfile, ctx: BuildContext) -> WorkloadConfig:
    """The synthetic generator's settings for `profile` at the build's point (lengths, spread, tokenizer, seed)."""
    return WorkloadConfig(
        input_len=ctx.input_len,
        output_len=ctx.output_len,
        length_distribution=profile.length_distribution,
        length_spread=profile.length_spread,
        tokenizer_path=ctx.tokenizer_path,
        seed=ctx.seed,
    )
