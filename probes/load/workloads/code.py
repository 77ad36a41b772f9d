"""`code` (HumanEval+ task prompts) and `jsonl` (the user's prompts): prompts read from a file."""

from __future__ import annotations

from probes.load.workloads.context import BuildContext, stamped
from probes.load.workloads.plan import Plan
from probes.load.workloads.profiles import CodeProfile, JsonlProfile
from probes.load.workloads.workload import WorkloadConfig, humaneval_prompts, jsonl_prompts

GENERATOR_VERSION = "code/1"
JSONL_GENERATOR_VERSION = "jsonl/1"


def build(profile: CodeProfile, ctx: BuildContext) -> Plan:
    spec = WorkloadConfig(
        source="humaneval", path=profile.path, output_len=profile.output_len or ctx.output_len, seed=ctx.seed
    )
    built = humaneval_prompts(spec, ctx.count)
    return Plan(built.prompts, built.output_lens, stamped(built.workload, profile, GENERATOR_VERSION))


def build_jsonl(profile: JsonlProfile, ctx: BuildContext) -> Plan:
    spec = WorkloadConfig(
        source="jsonl", path=profile.path, output_len=profile.output_len or ctx.output_len, seed=ctx.seed
    )
    built = jsonl_prompts(spec, ctx.count)
    return Plan(built.prompts, built.output_lens, stamped(built.workload, profile, JSONL_GENERATOR_VERSION))
