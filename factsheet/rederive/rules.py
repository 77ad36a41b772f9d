"""The judging rules a factsheet states (`rules`), each looked up in the registry and held
to the rule set of the document's version: the rules it was judged by are its version's, whatever it states."""

from __future__ import annotations

from factsheet.document.rules import RuleSet, UnknownRule, rule
from factsheet.document.schema import Factsheet
from factsheet.rederive.compare import Discrepancy


def stated_rules(sheet: Factsheet, rules: RuleSet) -> list[Discrepancy]:
    """An unknown id, an id no document of its version could state (a later rule on an older version), and
    where rules/stated judged it, its rule set's ids left out (a rule dropped to escape its check) or none."""
    if sheet.rules is None:
        if "rules/stated" not in rules:
            return []  # an older document: judged by the rules of its version
        why = f"the ids of the rules of schema {sheet.schema_version} (every document of it states them)"
        return [Discrepancy(figure="rules", stated=None, recomputed=why)]
    out: list[Discrepancy] = []
    for i, rule_id in enumerate(sheet.rules):
        try:
            entry = rule(rule_id)
        except UnknownRule as exc:
            out.append(Discrepancy(figure=f"rules[{i}]", stated=rule_id, recomputed=str(exc)))
            continue
        if rule_id not in rules:
            span = f"{entry.began}" + (f" until {entry.ended}" if entry.ended else " on")
            why = f"not a rule of schema {sheet.schema_version}: it judged documents from {span}"
            out.append(Discrepancy(figure=f"rules[{i}]", stated=rule_id, recomputed=why))
    left_out = [r for r in rules.ids if r not in sheet.rules]
    if left_out:
        out.append(
            Discrepancy(
                figure="rules", stated=len(sheet.rules), recomputed=f"leaves out {', '.join(left_out)}"
            )
        )
    return out
