"""A parser for the subset of UVL (Universal Variability Language) our feature models use.

Our own grammar on lark (MIT): the existing Python UVL parsers are GPL/LGPL. Supported: `namespace`,
a feature tree (groups `mandatory`, `optional`, `alternative`, `or`, and `[n..m]` cardinalities),
attributes (`{abstract, param 'temperature', value 0.7}`: numbers, single-quoted strings, booleans),
quoted feature names, `//` and `/* */` comments, and Boolean cross-tree constraints with `!`, `&`, `|`,
`=>`, `<=>` and parentheses. UVL is indentation-based; lark's Indenter turns indentation into tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from lark import Lark, Token, Transformer, UnexpectedInput
from lark.indenter import Indenter

from probes.core.errors import InputError


class UVLError(InputError):
    """A UVL text that does not parse, or a model that is not well formed (exit 2 at the CLI)."""


GRAMMAR = r"""
start: _NL? namespace? features constraints?

namespace: "namespace" name _NL
features: "features" _NL _INDENT feature _DEDENT

feature: name attributes? _NL (_INDENT group+ _DEDENT)?
group: group_kind _NL _INDENT feature+ _DEDENT
group_kind: "mandatory"          -> mandatory
          | "optional"           -> optional
          | "alternative"        -> alternative
          | "or"                 -> or_group
          | "[" INT ".." bound "]" -> cardinality
          | "[" INT "]"          -> exact_cardinality
bound: INT | STAR
STAR: "*"

attributes: "{" [attribute ("," attribute)*] "}"
attribute: ID value?
?value: SIGNED_NUMBER -> number
      | STRING        -> string
      | "true"        -> true
      | "false"       -> false

constraints: "constraints" _NL [_INDENT (constraint _NL)* _DEDENT]
constraint: expr
?expr: equiv
?equiv: implies ("<=>" implies)*
?implies: disj ("=>" implies)?
?disj: conj ("|" conj)*
?conj: neg ("&" neg)*
?neg: "!" neg -> not_
    | atom
?atom: name -> ref
     | "(" expr ")"

name: ID | QUOTED
ID: /[A-Za-z_][A-Za-z0-9_]*/
QUOTED: /"[^"\n]+"/
STRING: /'[^'\n]*'/
COMMENT: /\/\/[^\n]*/
BLOCK_COMMENT: /\/\*(.|\n)*?\*\//
_NL: (/\r?\n[\t ]*/ | COMMENT | BLOCK_COMMENT)+

%import common.INT
%import common.SIGNED_NUMBER
%declare _INDENT _DEDENT
%ignore /[\t ]+/
%ignore BLOCK_COMMENT
"""


class _UVLIndenter(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types: list[str] = []
    CLOSE_PAREN_types: list[str] = []
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 4


@cache
def _parser() -> Lark:
    return Lark(GRAMMAR, parser="lalr", postlex=_UVLIndenter(), maybe_placeholders=False)


# --- the model --------------------------------------------------------------------------------------

Expr = tuple  # ("var", name) | ("not", e) | ("and", a, b) | ("or", a, b) | ("implies", a, b) | ("iff", a, b)


@dataclass(frozen=True)
class Group:
    kind: str  # mandatory | optional | alternative | or | cardinality
    children: tuple[Feature, ...]
    low: int = 0
    high: int | None = None  # None: no upper bound


@dataclass(frozen=True)
class Feature:
    name: str
    attributes: dict = field(default_factory=dict, compare=False, hash=False)
    groups: tuple[Group, ...] = ()

    @property
    def abstract(self) -> bool:
        return bool(self.attributes.get("abstract", False))

    @property
    def children(self) -> list[Feature]:
        return [c for g in self.groups for c in g.children]


@dataclass(frozen=True)
class FeatureModel:
    root: Feature
    constraints: tuple[Expr, ...]
    namespace: str | None = None

    def features(self) -> list[Feature]:
        """All features, depth first (the order is also the BDD variable order: related ones stay close)."""
        out: list[Feature] = []

        def walk(f: Feature) -> None:
            out.append(f)
            for c in f.children:
                walk(c)

        walk(self.root)
        return out

    def feature(self, name: str) -> Feature:
        for f in self.features():
            if f.name == name:
                return f
        raise KeyError(name)

    def parents(self) -> dict[str, str]:
        return {c.name: f.name for f in self.features() for c in f.children}


def expr_vars(e: Expr) -> set[str]:
    if e[0] == "var":
        return {e[1]}
    return set().union(*(expr_vars(a) for a in e[1:]))


def expr_to_uvl(e: Expr, parent: int = 0) -> str:
    """UVL text of a constraint expression (parenthesised where precedence needs it)."""
    prec = {"iff": 1, "implies": 2, "or": 3, "and": 4, "not": 5, "var": 6}
    p = prec[e[0]]
    if e[0] == "var":
        text = e[1] if e[1].isidentifier() else f'"{e[1]}"'
    elif e[0] == "not":
        text = "!" + expr_to_uvl(e[1], p)
    else:
        op = {"iff": "<=>", "implies": "=>", "or": "|", "and": "&"}[e[0]]
        left_p = p + 1 if e[0] == "implies" else p  # => is right-associative
        text = f"{expr_to_uvl(e[1], left_p)} {op} {expr_to_uvl(e[2], p)}"
    return f"({text})" if p < parent else text


class _Build(Transformer):
    def name(self, items):
        tok: Token = items[0]
        return tok[1:-1] if tok.type == "QUOTED" else str(tok)

    def number(self, items):
        text = str(items[0])
        return int(text) if text.lstrip("-").isdigit() else float(text)

    def string(self, items):
        return str(items[0])[1:-1]

    def true(self, _):
        return True

    def false(self, _):
        return False

    def attribute(self, items):
        return (str(items[0]), items[1] if len(items) > 1 else True)

    def attributes(self, items):
        return dict(i for i in items if i is not None)

    def mandatory(self, _):
        return ("mandatory", 0, None)

    def optional(self, _):
        return ("optional", 0, None)

    def alternative(self, _):
        return ("alternative", 1, 1)

    def or_group(self, _):
        return ("or", 1, None)

    def bound(self, items):
        return None if str(items[0]) == "*" else int(items[0])

    def cardinality(self, items):
        return ("cardinality", int(items[0]), items[1])

    def exact_cardinality(self, items):
        return ("cardinality", int(items[0]), int(items[0]))

    def group(self, items):
        kind, low, high = items[0]
        return Group(kind=kind, children=tuple(items[1:]), low=low, high=high)

    def feature(self, items):
        name, rest = items[0], items[1:]
        attrs = rest[0] if rest and isinstance(rest[0], dict) else {}
        groups = tuple(g for g in rest if isinstance(g, Group))
        return Feature(name=name, attributes=attrs, groups=groups)

    def features(self, items):
        return items[0]

    def namespace(self, items):
        return ("namespace", items[0])

    def ref(self, items):
        return ("var", items[0])

    def not_(self, items):
        return ("not", items[0])

    def conj(self, items):
        return _fold("and", items)

    def disj(self, items):
        return _fold("or", items)

    def equiv(self, items):
        return _fold("iff", items)

    def implies(self, items):
        return ("implies", items[0], items[1])

    def constraint(self, items):
        return items[0]

    def constraints(self, items):
        return ("constraints", tuple(items))


def _fold(op: str, items: list) -> Expr:
    out = items[0]
    for it in items[1:]:
        out = (op, out, it)
    return out


def parse_uvl(text: str) -> FeatureModel:
    """Parse UVL text into a FeatureModel; UVLError names the line and column of a syntax error."""
    try:
        tree = _parser().parse(text.rstrip() + "\n")
    except UnexpectedInput as exc:
        raise UVLError(f"UVL syntax error at line {exc.line}, column {exc.column}") from None
    items = _Build().transform(tree).children
    namespace = next((i[1] for i in items if isinstance(i, tuple) and i[0] == "namespace"), None)
    root = next(i for i in items if isinstance(i, Feature))
    constraints = next((i[1] for i in items if isinstance(i, tuple) and i[0] == "constraints"), ())
    model = FeatureModel(root=root, constraints=constraints, namespace=namespace)
    _check(model)
    return model


def _check(model: FeatureModel) -> None:
    names = [f.name for f in model.features()]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UVLError(f"feature names must be unique; repeated: {', '.join(dup)}")
    known = set(names)
    for i, c in enumerate(model.constraints):
        unknown = sorted(expr_vars(c) - known)
        if unknown:
            raise UVLError(
                f"constraint {i + 1} ({expr_to_uvl(c)}) names unknown feature(s): {', '.join(unknown)}"
            )
    for f in model.features():
        for g in f.groups:
            if g.kind == "cardinality" and g.high is not None and (g.high < g.low or g.low > len(g.children)):
                raise UVLError(f"feature {f.name}: group cardinality [{g.low}..{g.high}] is impossible")
