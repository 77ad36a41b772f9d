"""Output comparison with EvalPlus semantics (`evalplus.eval.unsafe_execute`), on decoded data only.

An output passes when it equals the expected one; else, when the tolerance is non-zero, when it has
the expected's exact type (and length) and is within it as `np.allclose(rtol=1e-7, atol)`. The
tolerance is the task's `atol`, except that, as in EvalPlus, once an expected output of a test set is
a float (or a list/tuple of floats) a zero `atol` becomes 1e-6 for the rest of that set.

HumanEval/32 (`find_zero`) has many valid roots: a root passes when |poly(xs, root)| <= atol, computed
as EvalPlus's oracle does (fixed upstream in evalplus 6eb1e19; 0.3.1 fails every input of this task).
Otherwise it must match the canonical root, whose own residual exceeds atol on a few ill-conditioned
plus inputs. The oracle uses the inputs as given; EvalPlus uses them after the call, so a program that
mutates `xs` is judged on what it left there.
"""

from __future__ import annotations

import math

import numpy as np

_RTOL = 1e-7
_FLOAT_ATOL_WHEN_ZERO = 1e-6


class SetComparison:
    """Compares the outputs of one test set in order, carrying EvalPlus's tolerance from one to the next."""

    def __init__(self, atol: float, entry_point: str) -> None:
        self.atol = atol
        self.entry_point = entry_point

    def __call__(self, output: object, expected: object, args: list | None) -> bool:
        try:
            if self.entry_point == "find_zero" and args is not None:
                return _is_root(output, args, self.atol) or _match(output, expected, self.atol)
            if self.atol == 0 and _is_floats(expected):
                self.atol = _FLOAT_ATOL_WHEN_ZERO
            return _match(output, expected, self.atol)
        except (TypeError, ValueError, OverflowError, ArithmeticError, RecursionError):
            return False


def _match(output: object, expected: object, atol: float) -> bool:
    if output == expected:
        return True
    if atol == 0 or type(output) is not type(expected):
        return False
    if isinstance(expected, list | tuple) and len(output) != len(expected):  # type: ignore[arg-type]
        return False
    return bool(np.allclose(output, expected, rtol=_RTOL, atol=atol))


def _is_floats(value: object) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list | tuple) and value:
        return all(isinstance(v, float) for v in value)
    return False


def _is_root(output: object, args: list, atol: float) -> bool:
    if not isinstance(output, int | float) or not math.isfinite(output):
        return False
    xs = args[0]
    # EvalPlus's _poly, term for term: sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])
    residual = sum([coeff * math.pow(output, i) for i, coeff in enumerate(xs)])
    return abs(residual) <= atol
