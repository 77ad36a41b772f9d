"""A judging rule and the rules that judged one schema version (the registry: factsheet/document/rules)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from packaging.version import Version

from factsheet.document.versions import parse
from probes.core.errors import InputError
from probes.load.metrics import LoadMetrics
from probes.load.runner import Arrivals


class UnknownRule(InputError):
    """A rule id the registry does not hold (names it)."""


@dataclass(frozen=True)
class Rule:
    """One judging rule. `began`: the schema version whose documents it first judged; `ended`: the version
    that replaced it (None: it judges today's builds). `arrivals`: how `validate` replays an open loop's
    client-bound verdict by this rule from the arrivals the probes' current rule gives (None: the current
    rule's own; `replayed` False: not replayed, the verdict attested)."""

    id: str
    began: str
    wording: str
    ended: str | None = None
    arrivals: Callable[[Arrivals, LoadMetrics | None], Arrivals] | None = None
    replayed: bool = True

    @property
    def topic(self) -> str:
        """What the rule judges: the rules of one topic replace each other."""
        return self.id.split("/", 1)[0]

    def judged(self, version: Version) -> bool:
        """Whether a document of schema `version` was judged by this rule."""
        return parse(self.began) <= version and (self.ended is None or version < parse(self.ended))


@dataclass(frozen=True)
class RuleSet:
    """The rules that judged a document of one schema version."""

    version: str
    rules: tuple[Rule, ...]
    known: frozenset[str]  # every id the registry holds

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.rules]

    def __contains__(self, rule_id: object) -> bool:
        if (
            rule_id not in self.known
        ):  # a misspelt id in the asking code must fail, never read as "not judged"
            raise UnknownRule(f"rule {rule_id!r} is not a judging rule this tool knows")
        return rule_id in self.ids

    def of(self, topic: str) -> Rule:
        """The rule of `topic` that judged this version (KeyError: none did)."""
        found = [r for r in self.rules if r.topic == topic]
        if not found:
            raise KeyError(f"no {topic} rule judged schema {self.version}")
        return found[0]
