"""t-wise sampling under the constraints (a greedy YASA-like sampler on the BDD), coverage, uniform sampling.

A t-tuple is t literals (feature selected or not) over distinct features; it is *valid* when some valid
configuration contains it. Core and dead features are left out (their literals are fixed). The sampler
repeatedly starts a configuration, adds each still-uncovered tuple that stays satisfiable with what the
configuration already holds, then completes it uniformly at random; it stops when every valid tuple is
covered, so its coverage is 100 % by construction (and checked independently by `coverage`).
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass

from tuner.features.space import Config, FeatureSpace

Literal = tuple[int, bool]  # (variable level, value)


@dataclass(frozen=True)
class Sample:
    method: str  # "t-wise" | "uniform"
    t: int | None
    seed: int
    configs: tuple[Config, ...]
    seconds: float


def _varying(space: FeatureSpace) -> list[int]:
    return [i for i, (f, t) in enumerate(space.feasible_literals()) if f and t]


def valid_tuples(space: FeatureSpace, t: int) -> set[tuple[Literal, ...]]:
    """All valid t-tuples of literals over the varying features (t = 1, 2 or 3)."""
    if t not in (1, 2, 3):
        raise ValueError("t must be 1, 2 or 3")
    out: set[tuple[Literal, ...]] = set()
    _extend(space, _varying(space), t, (), space.root, 0, out)
    return out


def _extend(space: FeatureSpace, idx: list[int], t: int, prefix: tuple, u, start: int, out: set) -> None:
    # a plain function, not a recursive closure: a closure cycle holding the diagram lets the garbage
    # collector free dd's manager before its nodes, which dd reports as an error
    lits = space.feasible_literals(u)
    for pos in range(start, len(idx)):
        i = idx[pos]
        for value in (False, True):
            if not lits[i][value]:
                continue
            if len(prefix) + 1 == t:
                out.add(prefix + ((i, value),))
            else:
                _extend(
                    space,
                    idx,
                    t,
                    prefix + ((i, value),),
                    space.restrict(u, {space.names[i]: value}),
                    pos + 1,
                    out,
                )


def tuples_of(
    space: FeatureSpace, config: Config, t: int, idx: list[int] | None = None
) -> set[tuple[Literal, ...]]:
    idx = _varying(space) if idx is None else idx
    lits = [(i, space.names[i] in config) for i in idx]
    return set(itertools.combinations(lits, t))


def coverage(space: FeatureSpace, configs, t: int, valid: set | None = None) -> float:
    """Share of valid t-tuples that the configurations cover."""
    valid = valid_tuples(space, t) if valid is None else valid
    idx = _varying(space)
    covered: set = set()
    for c in configs:
        covered |= tuples_of(space, c, t, idx)
    return len(covered & valid) / len(valid) if valid else 1.0


def twise(space: FeatureSpace, t: int = 2, seed: int = 0) -> Sample:
    """A t-wise sample covering every valid t-tuple (greedy, seeded, reproducible)."""
    start = time.perf_counter()
    rng = random.Random(seed)
    idx = _varying(space)
    order = sorted(valid_tuples(space, t))
    rng.shuffle(order)
    uncovered = set(order)
    configs: list[Config] = []
    false = space.bdd.false
    while uncovered:
        given: dict[str, bool] = {}
        u = space.root
        lits = space.feasible_literals(u)
        for tup in order:
            if tup not in uncovered:
                continue
            new = {}
            for i, v in tup:
                name = space.names[i]
                if name in given:
                    if given[name] != v:
                        break
                elif not lits[i][v]:
                    break
                else:
                    new[name] = v
            else:
                if not new:
                    continue
                r = space.restrict(u, new)
                if r == false:
                    continue
                u = r
                given.update(new)
                lits = space.feasible_literals(u)
        config = space.uniform(rng, 1, given)[0]
        got = tuples_of(space, config, t, idx) & uncovered
        if not got:  # cannot happen: the first uncovered tuple is always satisfiable alone
            raise RuntimeError("t-wise sampler made no progress")
        uncovered -= got
        configs.append(config)
        order = [x for x in order if x in uncovered]
    return Sample("t-wise", t, seed, tuple(configs), time.perf_counter() - start)


def uniform(space: FeatureSpace, n: int, seed: int = 0) -> Sample:
    start = time.perf_counter()
    configs = space.uniform(random.Random(seed), n)
    return Sample("uniform", None, seed, tuple(configs), time.perf_counter() - start)
