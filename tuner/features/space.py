"""The configuration space of a feature model as a BDD (`dd`, BSD): exact count, validity, uniform sampling.

Semantics (the usual feature-model ones): the root is selected; a selected child implies its parent; a
mandatory child is selected with its parent; an alternative group selects exactly one child, an `or` group
at least one, a `[n..m]` group between n and m; cross-tree constraints hold. Variables are ordered depth
first, which keeps each group's variables adjacent and the diagram small.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping

from dd import autoref

from tuner.features.uvl import Expr, Feature, FeatureModel

Config = frozenset[str]  # the selected features


def _at_most(bdd: autoref.BDD, xs: list, k: int):
    """Cardinality constraint `sum(xs) <= k` as a BDD (dynamic programme over the count so far)."""
    # layer[j] = "at most k - j of the remaining may be set", built from the last variable backwards
    layer = [bdd.true] * (k + 1) + [bdd.false]
    for x in reversed(xs):
        layer = [bdd.ite(x, layer[j + 1], layer[j]) if j <= k else bdd.false for j in range(k + 1)] + [
            bdd.false
        ]
    return layer[0]


def _at_least(bdd: autoref.BDD, xs: list, k: int):
    return ~_at_most(bdd, xs, k - 1) if k > 0 else bdd.true


class FeatureSpace:
    """A feature model compiled to one BDD over all its features."""

    def __init__(self, model: FeatureModel, *, constraints: bool = True):
        self.model = model
        self.features: list[Feature] = model.features()
        self.names: list[str] = [f.name for f in self.features]
        self._var = {n: f"x{i}" for i, n in enumerate(self.names)}
        self._name = {v: n for n, v in self._var.items()}
        self.bdd = autoref.BDD()
        self.bdd.declare(*self._var.values())
        self.bdd.configure(reordering=False)  # keep the depth-first order: the walk relies on levels
        self.root = self._tree()
        self.tree_only = self.root
        if constraints:
            for c in model.constraints:
                self.root &= self.expr(c)

    # --- building --------------------------------------------------------------------------------
    def v(self, name: str):
        return self.bdd.var(self._var[name])

    def expr(self, e: Expr):
        op = e[0]
        if op == "var":
            return self.v(e[1])
        if op == "not":
            return ~self.expr(e[1])
        a, b = self.expr(e[1]), self.expr(e[2])
        if op == "and":
            return a & b
        if op == "or":
            return a | b
        if op == "implies":
            return ~a | b
        if op == "iff":
            return a.equiv(b)
        raise ValueError(f"unknown operator {op}")

    def _tree(self):
        bdd = self.bdd
        u = self.v(self.model.root.name)
        for f in self.features:
            p = self.v(f.name)
            for g in f.groups:
                xs = [self.v(c.name) for c in g.children]
                for x in xs:
                    u &= ~x | p  # child => parent
                if g.kind == "mandatory":
                    for x in xs:
                        u &= ~p | x
                    continue
                if g.kind == "optional":
                    continue
                low, high = g.low, g.high
                card = _at_least(bdd, xs, low)
                if high is not None:
                    card &= _at_most(bdd, xs, high)
                u &= ~p | card
        return u

    # --- queries ---------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.names)

    def count(self, u=None) -> int:
        """Exact number of valid configurations (dd's own counter)."""
        return int(self.bdd.count(self.root if u is None else u, nvars=self.n))

    def _level(self, u) -> int:
        return self.n if u in (self.bdd.true, self.bdd.false) else u.level

    def _cofactors(self, u):
        lo, hi = u.low, u.high
        return (~lo, ~hi) if u.negated else (lo, hi)

    def _counts(self, u, memo: dict) -> int:
        """Satisfying assignments of the variables at levels >= level(u) (memoised walk)."""
        if u == self.bdd.true:
            return 1
        if u == self.bdd.false:
            return 0
        key = (u.node, u.negated)
        if key not in memo:
            lo, hi = self._cofactors(u)
            memo[key] = self._counts(lo, memo) << (self._level(lo) - u.level - 1)
            memo[key] += self._counts(hi, memo) << (self._level(hi) - u.level - 1)
        return memo[key]

    def count_walk(self, u=None) -> int:
        """Exact count by our own walk of the diagram: a cross-check of dd's counter (and the walk's weights)."""
        u = self.root if u is None else u
        return self._counts(u, {}) << self._level(u)

    def restrict(self, u, assignment: Mapping[str, bool]):
        return self.bdd.let({self._var[k]: bool(b) for k, b in assignment.items()}, u)

    def is_valid(self, config: Iterable[str]) -> bool:
        chosen = set(config)
        unknown = chosen - set(self.names)
        if unknown:
            raise ValueError(f"unknown feature(s): {', '.join(sorted(unknown))}")
        return self.restrict(self.root, {n: n in chosen for n in self.names}) == self.bdd.true

    def satisfiable(self, assignment: Mapping[str, bool], u=None) -> bool:
        return self.restrict(self.root if u is None else u, assignment) != self.bdd.false

    def feasible_literals(self, u=None) -> list[tuple[bool, bool]]:
        """Per variable (by level): (can be False, can be True) in some satisfying assignment of u."""
        u = self.root if u is None else u
        out = [[False, False] for _ in range(self.n)]
        if u == self.bdd.false:
            return [tuple(x) for x in out]

        def free(a: int, b: int) -> None:
            for lvl in range(a, b):
                out[lvl][0] = out[lvl][1] = True

        free(0, self._level(u))
        seen: set = set()
        stack = [u]
        while stack:
            w = stack.pop()
            if w == self.bdd.true:
                continue
            key = (w.node, w.negated)
            if key in seen:
                continue
            seen.add(key)
            for value, c in zip((False, True), self._cofactors(w), strict=True):
                if c == self.bdd.false:
                    continue
                out[w.level][value] = True
                free(w.level + 1, self._level(c))
                stack.append(c)
        return [tuple(x) for x in out]

    def pick_min(self, given: Mapping[str, bool] | None = None) -> Config:
        """A valid configuration agreeing with `given`, preferring deselection at each level (deterministic)."""
        given = dict(given or {})
        u = self.restrict(self.root, given) if given else self.root
        if u == self.bdd.false:
            raise ValueError("no valid configuration")
        chosen = []
        while u != self.bdd.true:
            lo, hi = self._cofactors(u)
            if lo != self.bdd.false:
                u = lo
            else:
                chosen.append(self.names[u.level])
                u = hi
        return frozenset(chosen).difference(given) | {k for k, b in given.items() if b}

    def uniform(self, rng: random.Random, k: int, given: Mapping[str, bool] | None = None) -> list[Config]:
        """k configurations drawn uniformly from the valid ones agreeing with `given` (count-weighted walk)."""
        given = dict(given or {})
        u = self.restrict(self.root, given) if given else self.root
        forced = {k for k, b in given.items() if b}
        if u == self.bdd.false:
            raise ValueError("no valid configuration")
        memo: dict = {}
        self._counts(u, memo)
        out = []
        for _ in range(k):
            chosen = []
            w, level = u, 0
            while level < self.n:
                if self._level(w) > level:  # a variable the function does not depend on: fair coin
                    if rng.getrandbits(1):
                        chosen.append(self.names[level])
                    level += 1
                    continue
                lo, hi = self._cofactors(w)
                w_lo = self._counts(lo, memo) << (self._level(lo) - level - 1)
                w_hi = self._counts(hi, memo) << (self._level(hi) - level - 1)
                if rng.randrange(w_lo + w_hi) < w_hi:
                    chosen.append(self.names[level])
                    w = hi
                else:
                    w = lo
                level += 1
            out.append(frozenset(chosen).difference(given) | forced)
        return out

    def dead_features(self) -> list[str]:
        lits = self.feasible_literals()
        return [self.names[i] for i, (_, can_true) in enumerate(lits) if not can_true]

    def enumerate(self, limit: int = 100_000) -> list[Config]:
        """All valid configurations (small models only: tests and cross-checks)."""
        if self.count() > limit:
            raise ValueError(f"more than {limit} configurations")
        out = []
        for a in self.bdd.pick_iter(self.root, care_vars=set(self._var.values())):
            out.append(frozenset(self._name[v] for v, b in a.items() if b))
        return out


def brute_force_count(space: FeatureSpace) -> int:
    """Count by checking every assignment: an independent check for models of up to ~20 features."""
    if space.n > 22:
        raise ValueError("brute force is for tiny models")
    total = 0
    for bits in itertools.product((False, True), repeat=space.n):
        if space.is_valid(n for n, b in zip(space.names, bits, strict=True) if b):
            total += 1
    return total
