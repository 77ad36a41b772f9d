"""Graded parity for bench/humaneval_parity.py --graded: the inputs our judge counts as passed per test set
(`TestVerdict.n_passed`, graded mode) against the per-input details of EvalPlus 0.3.1 (`--test-details`).

Where EvalPlus keeps its details (evalplus/evaluate.py, evalplus/eval/__init__.py, 0.3.1): with
--test-details its fast check is off, so each set's worker goes through every input, recording each as
passed or failed (an exception or a wrong output fails that input only). The results file
(`<samples>_eval_results.json`) keeps, under "eval" -> task_id -> one record per sample in file order,
each set's status (`base_status`, `plus_status`) and the inputs that failed among those the worker reached
(`base_fail_tests`, `plus_fail_tests`: the input values themselves). How a count is read from that:

- "pass": every input passed.
- "fail" with failures listed: the worker went through every input (its failed status comes only from
  loading, before any input; after its loop it reports success and the parent turns it to "fail"), so
  passed = inputs - listed.
- "fail" with none listed: the program did not load (or has no entry point): none passed. (HumanEval/32's
  oracle in 0.3.1 never records a pass, so there too: none.)
- "timeout": the set's process was killed at its budget, or died without reporting (exit, crash, memory);
  the file lists the failures among the inputs reached but not how many were reached: the count is only
  bounded, 0 <= passed <= inputs - listed.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Literal

# Where EvalPlus's details mode and our graded judge differ by design; each disagreement names its reason.
EVALPLUS_TIMED_OUT = (
    "EvalPlus's set timed out (killed at its budget, or its process died without reporting): its results "
    "file lists the failed inputs among those reached, not how many were reached, so its count is a range"
)
PER_INPUT_TIME_OUT = (
    "our count stopped at an input with no result within its limit: EvalPlus interrupts a late call "
    "(SIGALRM) and goes on to the next input; our judge cannot (the call still runs in the sandbox), so it "
    "counts the rest as not passed (a lower bound, by design)"
)
DETAILS_MODE_NOTES = [
    "## What EvalPlus does differently in details mode, and how it is accounted for",
    "",
    "- Per input, EvalPlus's `time_limit` raises in the call (SIGALRM) at max(4 s, 4 × canonical time) and "
    "goes on to the next input in the same process; our sandbox's runner cannot interrupt a running call, "
    "so our count stops at the first late input and the rest count as not passed (the graded share is a "
    "lower bound there). Such rows are listed with that reason, not counted as agreeing.",
    "- A set's process has min(60 s, sum of limits) + 2 s in details mode (one second more than without "
    "details, 'for data collection'), then 1 s to be joined; ours has min(60 s, sum) + 2 s in all (the "
    "verdict run's budget). A set that runs out of budget: EvalPlus reports 'timeout' and keeps the failed "
    "inputs among those reached but not how many were reached, so its count is a range [0, inputs - "
    "failed listed]; our count is the inputs passed before the budget ran out. Such rows are 'within "
    "range' when ours lies inside it, and are counted apart from the exact agreements.",
    "- A program whose process exits or crashes during a call: EvalPlus's status is 'timeout' (its worker "
    "never reports), so again a range; ours counts the inputs passed before.",
    "- EvalPlus judges each set once; our judge grades a set that met a time-out again in a fresh sandbox "
    "and keeps the second run (a stall behind a busy host is not the program's).",
    "- Both run base and plus in separate processes and count plus even where base fails; the HumanEval+ "
    "verdict stays base AND plus.",
]


@dataclass(frozen=True)
class ReferenceCount:
    """Inputs EvalPlus's details record as passed in one test set: exact, or a range where its file cannot
    tell."""

    status: str
    low: int
    high: int

    @property
    def exact(self) -> bool:
        return self.low == self.high

    def __str__(self) -> str:
        return f"{self.low}" if self.exact else f"{self.low}–{self.high}"


def reference_count(status: str, failed: list, n_inputs: int) -> ReferenceCount:
    """The passed-input count one set's record of an `evalplus.evaluate --test-details` results file states
    (module docstring: how each status is read)."""
    if len(failed) > n_inputs:
        raise ValueError(f"{len(failed)} failed inputs listed for a set of {n_inputs}")
    if status == "pass":
        if failed:
            raise ValueError("a passing set with failed inputs listed")
        return ReferenceCount(status, n_inputs, n_inputs)
    if status == "fail":
        passed = n_inputs - len(failed) if failed else 0
        return ReferenceCount(status, passed, passed)
    if status == "timeout":
        return ReferenceCount(status, 0, n_inputs - len(failed))
    raise ValueError(f"unknown EvalPlus status {status!r}")


Outcome = Literal["agree", "within range", "disagree"]


@dataclass(frozen=True)
class CountRow:
    """One test set of one sample: our count, EvalPlus's, and why they differ where they do."""

    test_set: Literal["base", "plus"]
    n_inputs: int
    ours: int
    reference: ReferenceCount
    ours_cause: str | None
    outcome: Outcome
    reason: str | None  # None where they agree, or where no known difference explains it

    @property
    def explained(self) -> bool:
        return self.outcome == "agree" or self.reason is not None


def compare_counts(verdict, record: dict, known_difference: str | None = None) -> tuple[CountRow, CountRow]:
    """Base and plus rows for one sample: `verdict` is our graded SampleVerdict, `record` EvalPlus's
    details-mode record for the same program, `known_difference` why EvalPlus's judgement of this program
    is known to differ from ours (a reference defect, a difference by design), if it is."""
    rows = []
    for name in ("base", "plus"):
        ours = getattr(verdict, name)
        if ours.n_passed is None:
            raise ValueError(
                f"{verdict.task_id}: our verdict has no graded {name} count (judge with graded=True)"
            )
        ref = reference_count(record[f"{name}_status"], record[f"{name}_fail_tests"], ours.n_inputs)
        cause = _own_cause(name, ours.cause)
        if ref.exact and ref.low == ours.n_passed:
            outcome, reason = "agree", None
        elif not ref.exact and ref.low <= ours.n_passed <= ref.high:
            outcome, reason = "within range", EVALPLUS_TIMED_OUT
        else:
            outcome, reason = "disagree", known_difference
            if reason is None and ref.exact and ours.n_passed < ref.low and _stopped_late(cause):
                reason = PER_INPUT_TIME_OUT
        rows.append(CountRow(name, ours.n_inputs, ours.n_passed, ref, cause, outcome, reason))
    return rows[0], rows[1]


def _own_cause(name: str, cause: str | None) -> str | None:
    """The set's own first problem: a plus verdict that failed on base says 'base tests failed', with the
    plus set's own problem after it when it had one."""
    if name == "plus" and cause is not None and cause.startswith("base tests failed"):
        _, _, own = cause.partition("; ")
        return own or None
    return cause


def _stopped_late(cause: str | None) -> bool:
    """Whether our count stopped at an input that gave no result in time (the sandbox's 'no result within'
    record, or the set's budget), rather than running through the set."""
    where = (cause or "").rpartition("counting stopped at ")[2]
    return _LATE.match(where) is not None


_LATE = re.compile(r"(?:(?:base|plus) )?input #\d+: (?:no result within|test set over its)")


def _tally(
    samples: list, ours: list, theirs: list[dict]
) -> tuple[dict[str, Counter], list[tuple[object, CountRow]]]:
    """Counts per sample set over the samples EvalPlus judges correctly, and every test set whose counts are
    not equal (left-out samples included)."""
    by_set: dict[str, Counter] = defaultdict(Counter)
    shown: list[tuple[object, CountRow]] = []
    for sample, verdict, record in zip(samples, ours, theirs, strict=True):
        known = (
            (sample.note or "EvalPlus's judgement known to differ") if not sample.reference_correct else None
        )
        known = known or getattr(sample, "count_note", "") or None
        c = by_set[sample.set_name]
        c["n"] += 1
        c["counted"] += sample.reference_correct
        base_ok, plus_ok = verdict.base.status == "pass", verdict.plus.status == "pass"
        ref_base = record["base_status"] == "pass"
        ref_plus = ref_base and record["plus_status"] == "pass"
        if sample.reference_correct:
            c["verdicts"] += 2
            c["verdicts_agree"] += (base_ok == ref_base) + (plus_ok == ref_plus)
        for row in compare_counts(verdict, record, known):
            if sample.reference_correct:
                _add_count(c, row)
            if row.outcome != "agree":
                shown.append((sample, row))
    return by_set, shown


def _add_count(c: Counter, row: CountRow) -> None:
    key = row.test_set
    c[f"{key}_inputs"] += row.n_inputs
    c[f"{key}_ours"] += row.ours
    c[f"{key}_low"] += row.reference.low
    c[f"{key}_high"] += row.reference.high
    c[f"{key}_agree"] += row.outcome == "agree"
    c["counts"] += 1
    c["counts_agree"] += row.outcome == "agree"
    c["counts_range"] += row.outcome == "within range"
    c["counts_time_out"] += row.outcome == "disagree" and row.reason == PER_INPUT_TIME_OUT
    c["counts_known"] += row.outcome == "disagree" and row.explained and row.reason != PER_INPUT_TIME_OUT
    c["counts_unexplained"] += not row.explained


def _difference_rows(shown: list[tuple[object, CountRow]]) -> list[str]:
    """The table of every test set whose counts are not equal, or "None."."""
    out: list[str] = []
    if not shown:
        out.append("None.")
    else:
        out += [
            "| sample set | task | program | test set | ours / EvalPlus (status) | inputs | outcome | reason; our first problem |",
            "|---|---|---|---|---|---:|---|---|",
        ]
    for sample, row in shown:
        reason = row.reason or "**UNEXPLAINED**"
        first = f"; {row.ours_cause[:100]}" if row.ours_cause else ""
        left_out = "" if sample.reference_correct else " (left out)"
        out.append(
            f"| {sample.set_name} | {sample.task_id} | {sample.label} | {row.test_set} | {row.ours} / "
            f"{row.reference} ({row.reference.status}) | {row.n_inputs} | {row.outcome}{left_out} | {reason}{first} |"
        )
    return out


def graded_report(
    samples: list, ours: list, theirs: list[dict], intro: list[str], notes: list[str], stamp: dict
) -> str:
    """The graded-parity results file: `samples` (bench Samples), our graded verdicts and EvalPlus's
    details-mode records, all in one order; `intro` heads it (the command first), `notes` are the
    differences by design of the verdict comparison (they hold for the counts too), `stamp` (date,
    reference) opens its record line."""
    by_set, shown = _tally(samples, ours, theirs)
    total = Counter()
    for c in by_set.values():
        total.update(c)
    n_counts, agree = total["counts"], total["counts_agree"]
    record = {
        **stamp,
        "samples": total["n"],
        "samples_counted": total["counted"],
        "counts": n_counts,
        "counts_agreeing": agree,
        "counts_within_range": total["counts_range"],
        "counts_per_input_time_out": total["counts_time_out"],
        "counts_known_difference": total["counts_known"],
        "counts_unexplained": total["counts_unexplained"],
    }
    out = [
        *intro,
        "",
        f"**Graded parity: {agree}/{n_counts} per-set counts of inputs passed agree exactly "
        f"({100 * agree / max(n_counts, 1):.1f} %) on the {total['counted']} samples EvalPlus judges "
        f"correctly** (base and plus count of each); {total['counts_range']} lie within EvalPlus's range "
        f"where its set timed out, {total['counts_time_out']} differ by the per-input time-out design, "
        f"{total['counts_known']} for a known reason (listed), "
        f"{total['counts_unexplained']} are unexplained. {total['n'] - total['counted']} samples are left out "
        "where EvalPlus's judgement is known wrong or differs by design (listed below with the reason).",
        "",
        f"Verdicts in details mode (base, and base AND plus): {total['verdicts_agree']}/{total['verdicts']} "
        "agree on the same samples.",
        "",
        f"GRADED_PARITY_RECORD {json.dumps(record)}",
        "",
        "Per sample set, over the samples counted (inputs passed: summed over them, ours / EvalPlus, a range "
        "where one of EvalPlus's sets timed out):",
        "",
        "| sample set | samples counted | base counts agree | plus counts agree | within range | differ: "
        "per-input time-out | differ: known | unexplained | base inputs passed | plus inputs passed |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, c in by_set.items():
        n = c["counted"]
        out.append(
            f"| {name} | {n} of {c['n']} | {c['base_agree']}/{n} | {c['plus_agree']}/{n} | {c['counts_range']} "
            f"| {c['counts_time_out']} | {c['counts_known']} | {c['counts_unexplained']} | {_share(c, 'base')} | {_share(c, 'plus')} |"
        )
    out += ["", *DETAILS_MODE_NOTES, "", *notes, "", "## Every test set whose counts are not equal", ""]
    out += _difference_rows(shown)
    return "\n".join(out) + "\n"


def _share(c: Counter, key: str) -> str:
    """Inputs passed over the set's inputs, ours / EvalPlus (a range where one of its sets timed out)."""
    n, low, high = c[f"{key}_inputs"], c[f"{key}_low"], c[f"{key}_high"]
    ref = f"{low}" if low == high else f"{low}–{high}"
    share = f"{low / n:.1%}" if low == high else f"{low / n:.1%}–{high / n:.1%}"
    return f"{c[f'{key}_ours']} / {ref} of {n} ({c[f'{key}_ours'] / n:.1%} / {share})" if n else "–"
