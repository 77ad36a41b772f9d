"""The profiles by name: each its generator (`build`) and version. The one way a point's requests are built."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import NamedTuple

from pydantic import TypeAdapter, ValidationError

from probes.load.workloads import chat_sessions, code, long_context, shared_prefix, synthetic, trace
from probes.load.workloads.context import BuildContext
from probes.load.workloads.plan import Plan
from probes.load.workloads.profiles import PROFILE_NAMES, WorkloadProfile
from probes.load.workloads.workload import WorkloadError


class Generator(NamedTuple):
    version: str
    build: Callable[..., Plan]


PROFILES: dict[str, Generator] = {
    "synthetic": Generator(synthetic.GENERATOR_VERSION, synthetic.build),
    "chat-sessions": Generator(chat_sessions.GENERATOR_VERSION, chat_sessions.build),
    "shared-prefix": Generator(shared_prefix.GENERATOR_VERSION, shared_prefix.build),
    "long-context": Generator(long_context.GENERATOR_VERSION, long_context.build),
    "code": Generator(code.GENERATOR_VERSION, code.build),
    "jsonl": Generator(code.JSONL_GENERATOR_VERSION, code.build_jsonl),
    "trace": Generator(trace.GENERATOR_VERSION, trace.build),
}
assert tuple(PROFILES) == PROFILE_NAMES  # the parameters' union and the generators name the same profiles

_ADAPTER: TypeAdapter = TypeAdapter(WorkloadProfile)


def parse_profile(name: str, options: dict[str, str], where: str = "--workload") -> WorkloadProfile:
    """A profile from its name and `key=value` options (the CLI's spelling); unknown name or field → exit 2."""
    if name not in PROFILES:
        raise WorkloadError(f"{where}: unknown workload profile '{name}' (one of: {', '.join(PROFILES)})")
    try:
        return _ADAPTER.validate_python({**{k: _number(v) for k, v in options.items()}, "profile": name})
    except ValidationError as exc:
        # The first location is the profile's tag (its name, already said): the parameter follows it.
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"][1:]) or "(parameters)"
        raise WorkloadError(f"{where} {name}: {field}: {first['msg']}") from None


def _number(value: str) -> object:
    """A flag's value as a spec would state it: a number where Python reads one (`-3`, `0.5`, `1e9`, `inf`),
    else the text (the profile's numbers are strict: a spec's quoted "3" is refused, a flag's text is read)."""
    for kind in (int, float):
        with contextlib.suppress(ValueError):
            return kind(value)
    return value


def build_plan(profile: WorkloadProfile, ctx: BuildContext) -> Plan:
    """The requests a point sends: the same profile, context and generator version give the same bytes."""
    if ctx.count < 1:
        raise WorkloadError(f"workload: count must be ≥ 1, got {ctx.count}")
    return PROFILES[profile.profile].build(profile, ctx)
