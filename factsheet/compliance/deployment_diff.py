"""`factsheet diff`'s deployment rows: the chat template, the generation defaults and each load point's system
prompts, old against new, by digest. A changed one is a change of the deployment, not a figure's regression:
it never decides the verdict, and the report names it so a reader knows the figures compare two
deployments that wrap or complete requests differently."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from factsheet.document.rules import rule
from factsheet.document.schema import Factsheet, LoadSection
from probes.core.measurement import Model, NotMeasured
from probes.targets.deployment import ChatTemplate, DeploymentFacts, GenerationDefaults

DEPLOYMENT_RULE = "a changed deployment fact is reported, never a regression: it does not decide the verdict"


_KEPT = rule("keeps/deployment").began  # an older factsheet states none of these facts


class DeploymentChange(Model):
    """One deployment fact on both sides."""

    fact: str = Field(description="'chat template', 'generation defaults' or 'system prompts'")
    scope: str = Field(description="'deployment', or the load point whose workload sent the system prompts")
    path: str = Field(description="where the new factsheet states it (the old one: the same fact, by label)")
    status: Literal["changed", "unchanged", "not_comparable"]
    old: str | None = Field(None, description="the old side's digest (or what it states instead)")
    new: str | None = Field(None, description="the new side's digest (or what it states instead)")
    reason: str | None = Field(None, description="not_comparable: why")


def _nc(fact: str, scope: str, path: str, reason: str) -> DeploymentChange:
    return DeploymentChange(fact=fact, scope=scope, path=path, status="not_comparable", reason=reason)


def _row(fact: str, scope: str, path: str, old: str, new: str) -> DeploymentChange:
    status = "unchanged" if old == new else "changed"
    return DeploymentChange(fact=fact, scope=scope, path=path, status=status, old=old, new=new)


def _template(t: ChatTemplate | NotMeasured) -> str | None:
    return t.sha256 if isinstance(t, ChatTemplate) else None


def _generation(g: GenerationDefaults | NotMeasured) -> str | None:
    """The defaults as one comparable text: the file's digest, or where none applies its source, and the
    override's values (an override changes what the server applies without touching the file)."""
    if not isinstance(g, GenerationDefaults):
        return None
    text = g.sha256 or g.source
    if g.overrides is not None:
        text += f" + --override-generation-config {g.overrides.model_dump_json(exclude_none=True)}"
    return text


def deployment_changes(old: Factsheet, new: Factsheet) -> list[DeploymentChange]:
    """The chat template, the generation defaults and each shared load point's system prompts."""
    return (
        _facts(old.system.deployment, new.system.deployment)
        + _system_prompts(old, new)
        + _search_prompts(old, new)
    )


def _facts(old: DeploymentFacts | None, new: DeploymentFacts | None) -> list[DeploymentChange]:
    out = []
    for fact, name, digest in (
        ("chat template", "chat_template", _template),
        ("generation defaults", "generation_config", _generation),
    ):
        path = f"system.deployment.{name}"
        if old is None or new is None:
            which = "old" if old is None else "new"
            out.append(
                _nc(fact, "deployment", path, f"not stated in the {which} factsheet (schema < {_KEPT})")
            )
            continue
        a, b = getattr(old, name), getattr(new, name)
        da, db = digest(a), digest(b)
        if da is None or db is None:
            which, side = ("old", a) if da is None else ("new", b)
            out.append(_nc(fact, "deployment", path, f"not measured in the {which} factsheet: {side.reason}"))
        else:
            out.append(_row(fact, "deployment", path, da, db))
    return out


def _system_prompts(old: Factsheet, new: Factsheet) -> list[DeploymentChange]:
    """Each load point both sheets ran (by label): the digests of the system prompts its workload sent."""
    if not isinstance(old.load, LoadSection) or not isinstance(new.load, LoadSection):
        return []
    old_at = {e.result.label: (i, e.result.workload.system_prompts) for i, e in enumerate(old.load.points)}
    out = []
    for j, e in enumerate(new.load.points):
        label = e.result.label
        if label not in old_at:
            continue  # the figure rows already say the point is in one factsheet only
        _, a = old_at[label]
        b = e.result.workload.system_prompts
        path = f"load.points[{j}].result.workload.system_prompts"  # the new sheet's; the old's by label
        if a is None or b is None:
            which = "old" if a is None else "new"
            out.append(
                _nc(
                    "system prompts", label, path, f"not recorded in the {which} factsheet (schema < {_KEPT})"
                )
            )
            continue
        out.append(_row("system prompts", label, path, _prompts(a), _prompts(b)))
    return out


def _searches(sheet: Factsheet) -> dict[str, tuple[str, list | None]]:
    """Each capacity search by its scope (as the figure rows name it): its path and system prompts."""
    if not isinstance(sheet.load, LoadSection):
        return {}
    load, out = sheet.load, {}
    if not isinstance(load.capacity, NotMeasured):
        out[f"capacity ({load.profile()})"] = ("load.capacity.system_prompts", load.capacity.system_prompts)
    for k, c in enumerate(load.compared_workloads):
        path = f"load.compared_workloads[{k}].capacity.system_prompts"
        out.setdefault(f"capacity ({c.workload.profile})", (path, c.capacity.system_prompts))
    return out


def _search_prompts(old: Factsheet, new: Factsheet) -> list[DeploymentChange]:
    """Each capacity search both sheets ran: the digests of the system prompts its runs sent."""
    a, out = _searches(old), []
    for scope, (path, b) in _searches(new).items():
        if scope not in a:
            continue  # the figure rows already say the search is in one factsheet only
        before = a[scope][1]
        if before is None or b is None:
            which = "old" if before is None else "new"
            out.append(
                _nc(
                    "system prompts", scope, path, f"not recorded in the {which} factsheet (schema < {_KEPT})"
                )
            )
        else:
            out.append(_row("system prompts", scope, path, _prompts(before), _prompts(b)))
    return out


def _prompts(prompts: list) -> str:
    return ", ".join(p.sha256 for p in prompts) or "none sent"
