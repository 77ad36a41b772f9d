"""Borderline programs for bench/humaneval_parity.py: each probes one place where two judges can part.

A `Borderline` is one program for one task. `reference_correct` is False only where EvalPlus's verdict
is known to be wrong for that program (and `note` says why); the parity figure leaves those out.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from probes.accuracy._runner import REFERENCE_HEADROOM
from probes.accuracy.dataset import HumanEvalTask
from probes.accuracy.harness import MIN_TIME_LIMIT_S

# _deep(k) pushes k + 1 frames: k = the headroom is the deepest that fits.
_DIVE = "def _dive(k):\n    try:\n        return _dive(k + 1)\n    except RecursionError:\n        return k\n"


@dataclass(frozen=True)
class Borderline:
    name: str
    task_id: str
    build: Callable[[HumanEvalTask], str]
    note: str
    reference_correct: bool = True
    # EvalPlus's headroom depends on its worker's size, which holds the whole dataset: on a cut dataset
    # (--tasks) more is left to the program, so the program is only comparable on the full dataset.
    full_dataset_only: bool = False
    # Why EvalPlus's count of inputs passed differs where its verdict is right (bench --graded).
    count_note: str = ""


def _wrap(transform: str, prelude: str = "") -> Callable[[HumanEvalTask], str]:
    """The canonical solution renamed `_ref`; the entry point returns `transform` of its result."""

    def build(task: HumanEvalTask) -> str:
        ref = task.prompt.replace(f"def {task.entry_point}(", "def _ref(", 1) + task.canonical_solution
        call = transform.format("_ref(*args)")
        return f"{prelude}{ref}\n\ndef {task.entry_point}(*args):\n    return {call}\n"

    return build


def _first(lines: str, prelude: str = "", suffix: str = "") -> Callable[[HumanEvalTask], str]:
    """The canonical program with `lines` at the top of the function body."""

    def build(task: HumanEvalTask) -> str:
        body = textwrap.indent(textwrap.dedent(lines), "    ")
        return f"{prelude}{task.prompt}{body}{task.canonical_solution}\n{suffix}"

    return build


def _no_typing_import(prelude: str = "") -> Callable[[HumanEvalTask], str]:
    def build(task: HumanEvalTask) -> str:
        prompt = "\n".join(line for line in task.prompt.splitlines() if not line.startswith("from typing"))
        return f"{prelude}{prompt}\n{task.canonical_solution}"

    return build


def _mutating_find_zero(task: HumanEvalTask) -> str:
    ref = task.prompt.replace("def find_zero(", "def _ref(", 1) + task.canonical_solution
    return f"{ref}\n\ndef find_zero(xs):\n    root = _ref(xs)\n    xs.clear()\n    return root\n"


_SLEEP_PASS = MIN_TIME_LIMIT_S - 1.5
_SLEEP_FAIL = MIN_TIME_LIMIT_S + 1.5

BORDERLINE: list[Borderline] = [
    # Names and flags the runner could leak
    Borderline(
        "List annotation, no import", "HumanEval/7", _no_typing_import(), "NameError when run as a file"
    ),
    Borderline(
        "List annotation, own __future__ import",
        "HumanEval/7",
        _no_typing_import("from __future__ import annotations\n"),
        "annotations never evaluated: runs",
    ),
    Borderline(
        "__main__ block",
        "HumanEval/13",
        _first("", suffix="if __name__ == '__main__':\n    raise SystemExit(1)\n"),
        "__name__ is not '__main__' in either",
    ),
    Borderline("input() at load", "HumanEval/13", _first("", prelude="input()\n"), "no stdin in either"),
    Borderline("exit() when called", "HumanEval/13", _first("exit()\n"), "fails in both"),
    Borderline(
        "str of a 5000-digit int",
        "HumanEval/13",
        _first("", prelude="str(10 ** 5000)\n"),
        "Python's 4300-digit cap applies",
    ),
    *(
        Borderline(
            f"recursion headroom == {h}",
            "HumanEval/13",
            _first(f"assert _dive(0) == {h}\n", prelude=_DIVE),
            "passes only where the entry point's recursion headroom is this (as under evalplus.evaluate)",
        )
        for h in (REFERENCE_HEADROOM - 1, REFERENCE_HEADROOM, REFERENCE_HEADROOM + 1)
    ),
    Borderline(
        "recursion to the limit",
        "HumanEval/13",
        _first(
            f"_deep({REFERENCE_HEADROOM})\n",
            prelude="def _deep(k):\n    return 0 if k == 0 else _deep(k - 1)\n",
        ),
        "the deepest recursion that fits",
    ),
    Borderline(
        "recursion one frame past the limit",
        "HumanEval/13",
        _first(
            f"_deep({REFERENCE_HEADROOM + 1})\n",
            prelude="def _deep(k):\n    return 0 if k == 0 else _deep(k - 1)\n",
        ),
        "RecursionError in both",
    ),
    # Float tolerance
    Borderline("float + 5e-7 (atol 1e-6)", "HumanEval/2", _wrap("{} + 5e-7"), "within tolerance"),
    Borderline("float + 5e-6 (atol 1e-6)", "HumanEval/2", _wrap("{} + 5e-6"), "outside tolerance"),
    Borderline(
        "numpy.float64, equal", "HumanEval/2", _wrap("numpy.float64({})", "import numpy\n"), "== holds"
    ),
    Borderline(
        "numpy.float64 + 1e-9",
        "HumanEval/2",
        _wrap("numpy.float64({} + 1e-9)", "import numpy\n"),
        "tolerance path needs the exact type: fails in both",
    ),
    Borderline(
        "float + 5e-7 where atol is 0",
        "HumanEval/45",
        _wrap("{} + 5e-7"),
        "a float expected makes atol 1e-6",
    ),
    Borderline(
        "float + 5e-5 where atol is 0", "HumanEval/45", _wrap("{} + 5e-5"), "outside (except by rtol)"
    ),
    Borderline(
        "median + 1e-9 (int or float expected)",
        "HumanEval/47",
        _wrap("{} + 1e-9"),
        "int expected: type differs; float expected: within",
    ),
    # Output types
    Borderline("list for a tuple", "HumanEval/8", _wrap("list({})"), "tuple != list"),
    Borderline("list subclass", "HumanEval/9", _wrap("type('L', (list,), {{}})({})"), "== holds"),
    Borderline(
        "numpy array for a list",
        "HumanEval/9",
        _wrap("numpy.array({})", "import numpy\n"),
        "fails in both",
        count_note="EvalPlus compares in the candidate's process: a one-element array == a one-element list "
        "is a one-element boolean array, truthy, so its 2 plus inputs of one number pass there; we compare "
        "decoded data (an array is not a list)",
    ),
    Borderline("generator for a list", "HumanEval/9", _wrap("(x for x in {})"), "fails in both"),
    Borderline("1/0 for True/False", "HumanEval/0", _wrap("int({})"), "True == 1"),
    Borderline("float for an int", "HumanEval/13", _wrap("float({})"), "5.0 == 5"),
    Borderline(
        "Counter for a dict",
        "HumanEval/111",
        _wrap("collections.Counter({})", "import collections\n"),
        "== holds",
    ),
    Borderline(
        "object whose __eq__ is always True",
        "HumanEval/0",
        _wrap("_Liar()", "class _Liar:\n    def __eq__(self, other):\n        return True\n\n"),
        "EvalPlus compares in-process, so the object's own __eq__ answers: a wrong program passes",
        reference_correct=False,
    ),
    # None vs missing return
    Borderline(
        "bare return for None",
        "HumanEval/12",
        lambda t: t.prompt + t.canonical_solution.replace("return None", "return", 1),
        "implicit None equals expected None",
    ),
    Borderline("prints instead of returning", "HumanEval/13", _wrap("print({})"), "returns None"),
    # Mutated inputs
    Borderline(
        "clears its input after computing",
        "HumanEval/9",
        _wrap("(lambda r: (args[0].clear(), r)[1])({})"),
        "the returned value is what counts",
    ),
    Borderline(
        "find_zero clears xs after computing",
        "HumanEval/32",
        _mutating_find_zero,
        "EvalPlus's oracle reads xs after the call (and 0.3.1 fails every HumanEval/32 program)",
        reference_correct=False,
    ),
    # State
    Borderline(
        "global state across base and plus",
        "HumanEval/0",
        _first(
            "if _CALLS and _CALLS[0] == [[1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3] and len(_CALLS) > 7:\n"
            "    return None\n_CALLS.append([numbers, threshold])\n",
            prelude="_CALLS = []\n",
        ),
        "each set runs in a fresh process",
    ),
    # Time
    Borderline(
        f"one call sleeps {_SLEEP_PASS:g} s",
        "HumanEval/13",
        _first(f"if (a, b) == (3, 7):\n    __import__('time').sleep({_SLEEP_PASS})\n"),
        f"under the {MIN_TIME_LIMIT_S:g} s floor",
    ),
    Borderline(
        f"one call sleeps {_SLEEP_FAIL:g} s",
        "HumanEval/13",
        _first(f"if (a, b) == (3, 7):\n    __import__('time').sleep({_SLEEP_FAIL})\n"),
        f"over the {MIN_TIME_LIMIT_S:g} s floor",
    ),
    Borderline(
        f"loading sleeps {_SLEEP_FAIL:g} s",
        "HumanEval/13",
        _first("", prelude=f"__import__('time').sleep({_SLEEP_FAIL})\n"),
        "loading counts against the set's budget only",
    ),
    Borderline(
        "0.08 s per call (plus set over budget)",
        "HumanEval/0",
        _first("__import__('time').sleep(0.08)\n"),
        "999 plus calls: 80 s > min(60, sum of limits) + 2",
    ),
    # Environment
    Borderline(
        "1.75 GiB of address space",
        "HumanEval/13",
        _first("", prelude="import mmap\n_M = mmap.mmap(-1, 7 << 28)\n"),
        "fits: EvalPlus's 4 GiB RLIMIT_AS leaves ~1.9-2.0 GiB beside its own worker",
        full_dataset_only=True,
    ),
    Borderline(
        "2.25 GiB of address space",
        "HumanEval/13",
        _first("", prelude="import mmap\n_M = mmap.mmap(-1, 9 << 28)\n"),
        "does not fit in either",
        full_dataset_only=True,
    ),
    Borderline(
        "scratch file with open()",
        "HumanEval/13",
        _first("with open('scratch', 'w') as fh:\n    fh.write('x')\n"),
        "a correct program: EvalPlus's reliability_guard sets builtins.open = None, so it fails there; "
        "the sandbox contains file writes instead (private cwd, size limit)",
        reference_correct=False,
    ),
    Borderline(
        "prints while computing", "HumanEval/13", _first("print('working', a, b)\n"), "output swallowed"
    ),
]
