"""Policies: rules over factsheet fields with the evidence each demands, from a YAML file or a built-in profile.

A profile declares parameters with stated defaults (`${goodput_floor_rps}` in its rules); a user's small
policy file `extends:` it and sets `overrides:` — the report shows which value applied and where it came
from. Every path a policy names is checked against the factsheet schema when the policy is loaded.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from string import Template
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from factsheet.compliance.paths import PathError, check_path
from factsheet.untrusted.limits import MAX_POLICY_BYTES, MAX_POLICY_RULES
from factsheet.untrusted.parsing import parse_yaml
from factsheet.untrusted.reading import confined, read_given
from probes.core.digests import sha256_bytes
from probes.core.errors import InputError, describe_validation_error
from probes.core.measurement import Model

POLICY_VERSION = 1
PROFILES_PACKAGE = "factsheet.compliance.profiles"

Op = Literal["<=", "<", ">=", ">", "==", "!=", "exists"]
Scalar = float | int | str | bool
_ID = r"^[a-z0-9][a-z0-9._-]*$"


class PolicyError(InputError):
    """A policy that cannot be used: unreadable, malformed, or naming a field the factsheet does not have."""


class Reference(Model):
    """Where a rule's requirement comes from; quote the source's own item number."""

    source: str = Field(description="e.g. 'Regulation (EU) 2024/1689', 'NIST AI RMF 1.0'")
    item: str = Field(description="the source's own numbering, e.g. 'Annex IV 2(g)', 'MEASURE 2.3'")
    text: str = Field(description="a short paraphrase of the item")


class Evidence(Model):
    """What a figure must rest on before it can pass."""

    measured: bool = Field(True, description="measured: not estimated or simulated, not 'not measured'")
    sufficient_samples: bool = Field(
        False,
        description="a percentile claim rests on enough samples by MLPerf early stopping (the factsheet's rule)",
    )
    confidence: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="decide on the confidence interval at this level, not the point value: "
        "the whole interval must lie on the passing side",
    )
    raw_records: bool = Field(
        False, description="the raw records behind the figure exist and match their sha256"
    )


class Condition(Model):
    """The rule applies only when this holds; otherwise its outcome is 'not applicable'."""

    field: str
    op: Op
    value: Scalar | None = None


class Rule(Model):
    """One requirement. Exactly one of: `field` (a comparison), `check`, `documents`, `outside_factsheet`."""

    id: str = Field(pattern=_ID)
    title: str
    description: str | None = None
    field: str | None = Field(None, description="factsheet path of the figure checked")
    of: str | None = Field(
        None, description="divide the field by this path's value (a share, e.g. failed/measured)"
    )
    op: Op | None = None
    threshold: Scalar | None = Field(None, description="a value, or '${parameter}'")
    threshold_field: str | None = Field(None, description="take the threshold from this factsheet path")
    unit: str | None = Field(None, description="the threshold's unit; must match the figure's")
    check: Literal["raw_records"] | None = Field(
        None,
        description="raw_records: every raw-records file the factsheet names exists and matches its sha256",
    )
    documents: list[str] | None = Field(
        None, description="cross-reference: these paths document the requirement (present and measured)"
    )
    outside_factsheet: str | None = Field(
        None,
        description="the requirement lies outside this factsheet (what it concerns); outcome not applicable",
    )
    when: Condition | None = None
    evidence: Evidence = Field(default_factory=Evidence)
    severity: Literal["error", "warning"] = "error"
    references: list[Reference] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_kind(self) -> Rule:
        kinds = [
            k for k in ("field", "check", "documents", "outside_factsheet") if getattr(self, k) is not None
        ]
        if len(kinds) != 1:
            raise ValueError("a rule has exactly one of field, check, documents, outside_factsheet")
        if self.field is not None:
            if self.op is None:
                raise ValueError("a rule on a field needs 'op'")
            has_threshold = self.threshold is not None or self.threshold_field is not None
            if self.op != "exists" and not has_threshold:
                raise ValueError(f"op {self.op!r} needs 'threshold' or 'threshold_field'")
            if self.threshold is not None and self.threshold_field is not None:
                raise ValueError("give 'threshold' or 'threshold_field', not both")
            t = self.threshold
            unresolved = isinstance(t, str) and t.startswith("${")
            if self.op in ("<=", "<", ">=", ">") and (isinstance(t, bool | str) and not unresolved):
                raise ValueError(f"op {self.op!r} needs a numeric threshold, got {t!r}")
        elif any(v is not None for v in (self.op, self.threshold, self.threshold_field, self.of)):
            raise ValueError("op, threshold, threshold_field and of belong to rules on a field")
        return self

    def paths(self) -> list[str]:
        paths = [p for p in (self.field, self.of, self.threshold_field) if p]
        paths += self.documents or []
        if self.when:
            paths.append(self.when.field)
        return paths


class Parameter(Model):
    """A value a profile's rules use, with its stated default (a policy that extends it may override)."""

    default: Scalar
    unit: str | None = None
    description: str


class Policy(Model):
    """A policy file (YAML). `factsheet schema` publishes its JSON Schema."""

    policy_version: Literal[1] = Field(POLICY_VERSION, description="version of this policy format")
    id: str = Field(pattern=_ID)
    title: str
    version: str
    description: str | None = None
    disclaimer: str | None = Field(None, description="what passing this policy does not mean")
    extends: str | None = Field(
        None, description="a built-in profile or policy file whose rules are included"
    )
    parameters: dict[str, Parameter] = Field(default_factory=dict)
    overrides: dict[str, Scalar] = Field(
        default_factory=dict, description="parameter values replacing the defaults of this policy or its base"
    )
    disable: list[str] = Field(
        default_factory=list, description="rule ids of the base not checked (reported as not applicable)"
    )
    max_regression: dict[str, str | float] = Field(
        default_factory=dict,
        description="`factsheet diff` thresholds: '<metric>.<stat>' -> '10%' (relative) or a number (absolute)",
    )
    on_inconclusive: Literal["pass", "fail"] | None = Field(
        None,
        description="the exit code of a `factsheet diff` whose verdict is inconclusive (a figure "
        "it decides on not compared, or not decided: no between-run noise, busy host): fail (exit 1, the "
        "default) or pass (exit 0); the diff report states which applied",
    )
    rules: list[Rule] = Field(default_factory=list)


class AppliedParameter(Model):
    name: str
    value: Scalar
    unit: str | None
    description: str
    source: str = Field(description="where the value applied comes from (a default or an override)")


class LoadedPolicy(Model):
    """A policy as applied: its base merged in, parameters substituted, paths checked."""

    id: str
    title: str
    version: str
    description: str | None
    disclaimer: str | None
    source: str = Field(description="file path, or 'built-in profile NAME'")
    extends: list[str] = Field(description="the chain of policies it extends, nearest first")
    sha256: str = Field(description="digest of the applied policy (rules after substitution)")
    parameters: list[AppliedParameter]
    max_regression: dict[str, str | float]
    on_inconclusive: Literal["pass", "fail"] | None = Field(
        None, description="`factsheet diff`'s gate on an inconclusive verdict (None: not set, the default)"
    )
    disabled: dict[str, str] = Field(
        default_factory=dict, description="rule id -> the policy that disabled it"
    )
    rules: list[Rule]


# --- loading ---------------------------------------------------------------------------------------


def profile_names() -> list[str]:
    return sorted(
        p.name.removesuffix(".yaml")
        for p in resources.files(PROFILES_PACKAGE).iterdir()
        if p.name.endswith(".yaml")
    )


def _read(ref: str, base: Path | None, *, confine: bool = False) -> tuple[bytes, str, Path | None]:
    """A policy's bytes, where they come from, and the folder its own `extends:` resolves in.

    A file the user names (command line, build spec) may be anywhere; one a policy's `extends:` names must
    stay inside that policy's folder (`confine`: a policy may come from someone else). Either must be a
    regular file within MAX_POLICY_BYTES (a FIFO or /dev/zero is refused before a byte is read)."""
    if confine and base is not None:
        path = confined(base, ref, "policy extends")
    else:
        path = Path(ref) if base is None or Path(ref).is_absolute() else base / ref
    if not path.exists() and ref in profile_names():
        data = resources.files(PROFILES_PACKAGE).joinpath(f"{ref}.yaml").read_bytes()
        return data, f"built-in profile {ref}", None
    try:
        return read_given(path, MAX_POLICY_BYTES, "policy"), str(path), path.parent
    except OSError as exc:
        known = ", ".join(profile_names())
        raise PolicyError(f"{ref}: cannot read policy ({exc.strerror}); built-in profiles: {known}") from exc


def _parse(data: bytes, source: str) -> Policy:
    """Nesting, size and rule count bounded before the rules are validated (factsheet.untrusted.limits)."""
    doc = parse_yaml(data, source, error=PolicyError)
    if not isinstance(doc, dict):
        raise PolicyError(f"{source}: a policy is a YAML mapping with id, title, version and rules")
    rules = doc.get("rules")
    if isinstance(rules, list) and len(rules) > MAX_POLICY_RULES:
        raise PolicyError(f"{source}: {len(rules):,} rules, over the limit of {MAX_POLICY_RULES}")
    try:
        return Policy.model_validate(doc)
    except ValidationError as exc:
        raise PolicyError(f"{source}: {describe_validation_error(exc)}") from exc


def load_policy(ref: str, base: Path | None = None) -> LoadedPolicy:
    """A policy file or built-in profile, its base merged in, parameters applied, every path checked."""
    chain: list[tuple[Policy, str]] = []
    seen: set[str] = set()
    rules = 0
    while True:
        data, source, folder = _read(ref, base, confine=bool(chain))
        policy = _parse(data, source)
        chain.append((policy, source))
        rules += len(policy.rules)
        if rules > MAX_POLICY_RULES:
            raise PolicyError(
                f"{source}: {rules:,} rules with what it extends, over the limit of {MAX_POLICY_RULES}"
            )
        if policy.extends is None:
            break
        if source in seen or len(chain) > 8:
            raise PolicyError(f"{source}: extends forms a cycle")
        seen.add(source)
        ref, base = policy.extends, folder
    return _merge(chain)


def _merge(chain: list[tuple[Policy, str]]) -> LoadedPolicy:
    top, top_source = chain[0]
    declared: dict[str, tuple[Parameter, str]] = {}
    rules: dict[str, Rule] = {}
    max_regression: dict[str, str | float] = {}
    on_inconclusive = None
    for policy, source in reversed(chain):  # base first, so nearer policies win
        on_inconclusive = policy.on_inconclusive or on_inconclusive
        for name, p in policy.parameters.items():
            declared[name] = (p, f"default in {source}")
        for rule in policy.rules:
            rules[rule.id] = rule
        max_regression.update(policy.max_regression)
    values = {name: (p.default, where) for name, (p, where) in declared.items()}
    for policy, source in reversed(chain):
        for name, value in policy.overrides.items():
            if name not in declared:
                known = ", ".join(sorted(declared)) or "none"
                raise PolicyError(f"{source}: overrides.{name}: no such parameter (declared: {known})")
            _check_type(name, value, declared[name][0], source)
            values[name] = (value, f"overridden in {source}")
    disabled: dict[str, str] = {}
    for policy, source in chain:
        for rule_id in policy.disable:
            if rule_id not in rules:
                raise PolicyError(f"{source}: disable: no rule {rule_id!r} (rules: {', '.join(rules)})")
            disabled.setdefault(rule_id, source)
    subst = {name: v for name, (v, _) in values.items()}
    applied = [_substitute(rule, subst, top_source) for rule in rules.values()]
    for rule in applied:
        for path in rule.paths():
            try:
                check_path(path)
            except PathError as exc:
                raise PolicyError(f"{top_source}: rules.{rule.id}: {exc}") from None
    params = [
        AppliedParameter(
            name=n, value=values[n][0], unit=p.unit, description=p.description, source=values[n][1]
        )
        for n, (p, _) in declared.items()
    ]
    digest = sha256_bytes(json.dumps([r.model_dump(mode="json") for r in applied], sort_keys=True).encode())
    return LoadedPolicy(
        id=top.id,
        title=top.title,
        version=top.version,
        description=top.description or next((p.description for p, _ in chain if p.description), None),
        disclaimer=next((p.disclaimer for p, _ in chain if p.disclaimer), None),
        source=top_source,
        extends=[s for _, s in chain[1:]],
        sha256=digest,
        parameters=params,
        max_regression=max_regression,
        on_inconclusive=on_inconclusive,
        disabled=disabled,
        rules=applied,
    )


def _check_type(name: str, value: Scalar, p: Parameter, source: str) -> None:
    numeric = isinstance(p.default, int | float) and not isinstance(p.default, bool)
    ok = (
        (isinstance(value, int | float) and not isinstance(value, bool))
        if numeric
        else isinstance(value, type(p.default))
    )
    if not ok:
        raise PolicyError(
            f"{source}: overrides.{name}: expected {type(p.default).__name__} like the default "
            f"{p.default!r}, got {value!r}"
        )


_WHOLE = re.compile(r"^\$\{(\w+)\}$")


def _substitute(rule: Rule, values: dict[str, Scalar], source: str) -> Rule:
    """`${name}` in a rule's strings; a threshold that is exactly `${name}` takes the value's own type."""

    def sub(text, where):
        if not isinstance(text, str):
            return text
        whole = _WHOLE.match(text)
        try:
            if whole:
                return values[whole.group(1)]
            if where in ("title", "description"):  # prose may hold a '$' of its own
                return Template(text).safe_substitute(values)
            return Template(text).substitute(values)
        except KeyError as exc:
            raise PolicyError(f"{source}: rules.{rule.id}.{where}: unknown parameter {exc}") from None
        except ValueError as exc:
            raise PolicyError(f"{source}: rules.{rule.id}.{where}: {exc}") from None

    data = rule.model_dump()
    for key in ("field", "of", "threshold_field", "title", "description"):
        data[key] = sub(data[key], key)
    data["threshold"] = sub(data["threshold"], "threshold")
    if data["documents"]:
        data["documents"] = [sub(p, "documents") for p in data["documents"]]
    if data["when"]:
        data["when"]["field"] = sub(data["when"]["field"], "when.field")
        data["when"]["value"] = sub(data["when"]["value"], "when.value")
    return Rule.model_validate(data)
