"""`diff_factsheets`: the regression gate between two builds (`factsheet diff`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from factsheet.api.results import Result
from factsheet.compliance.diff import (
    DEFAULT_ON_INCONCLUSIVE,
    DiffError,
    DiffReport,
    compare,
    parse_limits,
    write_diff,
)
from factsheet.compliance.policy import load_policy
from factsheet.rederive.validate import load_factsheet


class DiffResult(Result):
    """The diff report and the files it was written to; `failure` is the verdict's reason unless the gate
    passes (no_regression; inconclusive where the policy's on_inconclusive is pass)."""

    report: DiffReport

    @property
    def verdict(self) -> str:
        return self.report.verdict


def diff_factsheets(
    old: Path,
    new: Path,
    *,
    policies: Sequence[str] = (),
    max_regression: Mapping[str, str | float] | Sequence[str] = (),
    output: Path | None = None,
) -> DiffResult:
    """Compare the candidate `new` with the baseline `old`, each re-derived from its raw records, on what the
    factsheets claim (capacity at SLO, its confirmation run, pass@1; sweep points indicative); write
    diff.json/.md/.html into `output` (default: the candidate's folder). Limits come from the policies'
    `max_regression`, then `max_regression` (a mapping METRIC -> LIMIT such as {"e2el_ms.p99": "10%"}, or the
    CLI's "METRIC=LIMIT" strings), each overriding the one before."""
    limits, on_inconclusive = {}, (DEFAULT_ON_INCONCLUSIVE, "default")
    for ref in policies:
        policy = load_policy(ref)
        limits.update(parse_limits(policy.max_regression, source=ref))
        if policy.on_inconclusive is not None:  # each policy given overrides the one before, as limits do
            on_inconclusive = (policy.on_inconclusive, f"policy {policy.id}")
    given = max_regression if isinstance(max_regression, Mapping) else dict(map(_split, max_regression))
    limits.update(parse_limits(dict(given), source="--max-regression"))
    old, new = Path(old), Path(new)
    a, b = load_factsheet(old), load_factsheet(new)
    report = compare(a, old, b, new, limits, on_inconclusive=on_inconclusive)
    written = write_diff(report, output or new.parent)
    failure = None if report.gate == "pass" else report.verdict_reason
    return DiffResult(report=report, written=tuple(written), failure=failure)


def _split(item: str) -> tuple[str, str]:
    """'METRIC=LIMIT', as `--max-regression` spells one limit."""
    key, sep, value = item.partition("=")
    if not sep or not key or not value:
        raise DiffError(f"--max-regression {item!r}: expected METRIC=LIMIT, e.g. e2el_ms.p99=10%")
    return key.strip(), value.strip()
