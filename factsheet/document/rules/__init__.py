"""The judging rules, as data: which rule judged what in a factsheet of each schema version.

Each rule is an entry (registry.RULES) with a stable id, `topic/name` ("client-bound/last-byte"), the schema
version it began, the version that replaced it (if one did), its wording and, where `validate` replays it
with a function of its own, that function. A document is judged by the rule set of its version (`rule_set`):
every entry that had begun and not ended at it. The probes know only the current rules; an older document's
rule lives here, beside its wording. Dropping an old schema version is deleting the entries that ended by it.
No rule is recognised by its sentence: a document's version, or the ids it states, select its rules.
"""

from __future__ import annotations

from functools import cache

from factsheet.document.rules.registry import RULES
from factsheet.document.rules.rule import Rule, RuleSet, UnknownRule
from factsheet.document.versions import parse

__all__ = ["RULES", "Rule", "RuleSet", "UnknownRule", "rule", "rule_set"]

_BY_ID = {r.id: r for r in RULES}


def rule(rule_id: str) -> Rule:
    """The registry's entry `rule_id`; UnknownRule naming it when there is none."""
    found = _BY_ID.get(rule_id)
    if found is None:
        raise UnknownRule(f"rule {rule_id!r} is not a judging rule this tool knows")
    return found


@cache
def rule_set(version: str) -> RuleSet:
    """The rules that judged a document of schema `version` (already checked readable)."""
    v = parse(version)
    return RuleSet(version, tuple(r for r in RULES if r.judged(v)), frozenset(_BY_ID))
