"""Output comparison with EvalPlus semantics, on decoded pure data only.

Floats (or lists/tuples of floats) match within the task's `atol` (1e-6 when it is 0) and rtol 1e-7,
as `np.allclose`; everything else must be equal. HumanEval/32 (`find_zero`) has many valid roots, so a
candidate root also passes when |poly(xs, root)| <= atol (EvalPlus's special oracle); otherwise it must
match the canonical root (whose own residual exceeds atol on a few ill-conditioned plus inputs).
"""

from __future__ import annotations

import math

import numpy as np

_RTOL = 1e-7
_FLOAT_ATOL_WHEN_ZERO = 1e-6


def outputs_match(output: object, expected: object, *, atol: float, entry_point: str, args: list) -> bool:
    try:
        if entry_point == "find_zero" and _is_root(output, args, atol):
            return True
        return _match(output, expected, atol)
    except (TypeError, ValueError, OverflowError, ArithmeticError):
        return False


def _match(output: object, expected: object, atol: float) -> bool:
    if output == expected:
        return True
    if atol == 0 and _is_floats(expected):
        atol = _FLOAT_ATOL_WHEN_ZERO
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
    if type(output) not in (int, float) or not math.isfinite(output):
        return False
    xs = args[0]
    value = math.fsum(coeff * math.pow(output, i) for i, coeff in enumerate(xs))
    return abs(value) <= atol
