"""Schema versions (semver) of factsheets and build specs, and which ones this tool reads.

A minor version only adds (optional fields, new figures): a document of an older minor of the same major
validates unchanged. A newer minor may carry fields this tool does not know, and a newer major changed the
meaning or shape of something: both are refused with the reason, never validated half-understood. An older
major would need `factsheet migrate` (none exists: 1 is the first major).
"""

from __future__ import annotations

from typing import Literal

from packaging.version import InvalidVersion, Version

from probes.core.errors import InputError


class SchemaVersionError(InputError):
    """A document whose schema version this tool cannot read (names the versions and what to do)."""


def parse(text: object, what: str = "schema_version") -> Version:
    """`packaging`'s reading of `text`, held to semver's MAJOR.MINOR.PATCH: packaging also reads "v1.2",
    "1.02.0", "1.2.0rc1" or "1.2.0+x", none of which a factsheet states, so its plain release (no pre, post, dev or local part) must be the text."""
    try:
        version = Version(text) if isinstance(text, str) else None
    except InvalidVersion:
        version = None
    if version is None or len(version.release) != 3 or version.base_version != text:
        raise SchemaVersionError(f"{what}: {text!r} is not a semantic version (MAJOR.MINOR.PATCH)")
    return version


# The other published schemas' versions, each with what its minors added.
# semver of the published spec schema; its major is factsheet.spec.build.SPEC_VERSION. 1.2.0: the optional `publish` section.
# 1.3.0: load.rationale (why the load is shaped as it is; carried into the factsheet).
# 1.3.0: `load.workload` (the workload profile: synthetic, chat-sessions, shared-prefix, long-context, code,
# jsonl, trace); a trace point gives neither concurrency nor rate.
# 1.4.0: `load.compared_workloads` (capacity at SLO for further workload profiles, side by side).
# 1.6.0: `load.workers` (worker processes the load is split across; probes/load/workers), `load.executor`
# and `load.ray_address` (the workers as Ray actors across a cluster's nodes).
# 1.7.0: `capacity.confirm_step` (one, or bisect: how a failed confirmation steps down).
# 1.7.0 also: `capacity.repeats` (the headline run k ≥ 3 times in all, each after a fresh server start or a
# prefix-cache reset, each with its own seed: the factsheet's between-run spread and rebuild interval).
# 1.8.0: `target.check_model` (model listing optional) and `target.engine` (the serving engine, else found from
# the server's answers) for an endpoint; a base_url ending in /v1 is read without it.
# 1.8.0 also: `capacity.max_value` optional (a cap; none: the search doubles until a clear fail), repeats confirm
# each step of the search (a failed run steps down), and `load.budget_s` (the build's time budget, planned).
# 1.8.0 also: the optional `governance` section (factsheet/spec/governance.py), carried into the factsheet as written.
# 1.9.0: `capacity.confirm_step: bisect-long` (a failed confirmation halves towards what a long run held).
SPEC_SCHEMA_VERSION = "1.9.0"

# The compliance report's schema. 1.1.0: each policy carries its rules as applied (so `factsheet validate` can re-run them), and `integrity`.
REPORT_VERSION = "1.1.0"
ReportVersion = Literal["1.0.0", "1.1.0"]  # every version a report may state

# The diff report's schema. 1.1.0: verdicts "unsupported" and "inconclusive", with verdict_reason and each side's unsupported figures.
# 1.2.0: capacity at SLO and the confirmation runs' figures decide; sweep rows are indicative; percentiles
# only where both sides' samples support them, with order-statistic noise; lower bounds; noise_scope.
# 1.3.0: `deployment`: the chat template, generation defaults and system prompts, old against new (changes
# are named, never decide the verdict).
# 1.3.0 also: between-run noise from the repeats (Welch, Bonferroni over the figures so decided: Noise.alpha,
# FigureDiff.k_old/k_new); a worse row on a busy host is "not decided: busy host" (FigureDiff.busy_host).
# 1.4.0: the baseline held to its records as the candidate is (either side unsupported: verdict unsupported);
# no_regression only when every row that decides was compared and decided; a row decides only on between-run
# noise (FigureDiff.between_run; else not decided: no between-run noise); the policy's `on_inconclusive` and
# the gate it gives (DiffReport.gate); the baseline's repeats alone decide a candidate run at the same load.
# 1.5.0: the confirmation rows of two different answers are decided by the capacity row (FigureDiff.decided_by),
# not left open; a between-run row notes the two sides' host speeds (FigureDiff.host_ratio, never applied).
# 1.6.0: a confirmation run's figures decide only where page 1 states their rebuild interval (p99 E2EL, TTFT,
# TPOT, goodput, SLO attainment; the p50s and ITL reported, indicative); each side's between-run spread no
# less than its runs' within-run half-width allows, as page 1 takes it (FigureDiff.old_within_half/new_within_half).
DIFF_VERSION = "1.6.0"
DiffVersion = Literal["1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0", "1.6.0"]  # every version a diff may state

# semver of the published policy schema; its major is factsheet.compliance.policy.POLICY_VERSION. 1.1.0:
# on_inconclusive.
POLICY_SCHEMA_VERSION = "1.1.0"

# What each minor of factsheet schema 1 changed in how a document is judged is a rule of the registry
# (factsheet/document/rules): a document is held to the rules of its version.


def same_major_pattern(current: str) -> str:
    """JSON Schema pattern of every version a `current` tool reads: any minor and patch of its major."""
    return rf"^{parse(current).major}\.(0|[1-9]\d*)\.(0|[1-9]\d*)$"


def check_readable(stated: object, current: str, *, document: str = "factsheet", tool: str = "") -> Version:
    """The stated version when this tool (schema `current`) reads it; else SchemaVersionError saying why."""
    version, mine = parse(stated, f"{document} schema_version"), parse(current)
    by = f"this tool{f' ({tool})' if tool else ''} reads schema {mine.major}.x up to {mine}"
    if version.major > mine.major:
        raise SchemaVersionError(
            f"{document} schema {version} is a newer major version than {by}: its fields may mean something "
            "else; use a newer llm-factsheet (pip install -U llm-factsheet)"
        )
    if version.major < mine.major:
        raise SchemaVersionError(
            f"{document} schema {version} is an older major version than {by}: run `factsheet migrate` "
            "with a tool that has a migration from it, or validate it with the tool that wrote it"
        )
    if version.minor > mine.minor:
        raise SchemaVersionError(
            f"{document} schema {version} is newer than {by}: it may hold fields this tool cannot check; "
            "use a newer llm-factsheet (pip install -U llm-factsheet)"
        )
    return version
