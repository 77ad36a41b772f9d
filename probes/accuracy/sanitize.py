"""Extracting a program from a chat reply, in the spirit of EvalPlus's sanitizer.

Take fenced code blocks (else the whole reply), keep the one that defines the entry point, and keep
only imports, function/class definitions and top-level assignments (dropping example calls, prints
and `if __name__ == "__main__":` blocks that would run at import).
"""

from __future__ import annotations

import ast
import re

_FENCE = re.compile(r"```[ \t]*[\w+-]*[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_KEPT = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
)


def extract_code(reply: str, entry_point: str) -> str:
    """Best program in `reply` for `entry_point`; empty string when nothing parses."""
    candidates = [_parseable_prefix(block) for block in _FENCE.findall(reply)] or [_parseable_prefix(reply)]
    trees = [tree for tree in candidates if tree is not None]
    if not trees:
        return ""
    tree = next((t for t in trees if _defines(t, entry_point)), max(trees, key=lambda t: len(t.body)))
    tree.body = [node for node in tree.body if isinstance(node, _KEPT)]
    return ast.unparse(tree) + "\n" if tree.body else ""


def defines(code: str, entry_point: str) -> bool:
    try:
        return _defines(ast.parse(code), entry_point)
    except SyntaxError:
        return False


def _defines(tree: ast.Module, entry_point: str) -> bool:
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point
        for node in tree.body
    )


def _parseable_prefix(code: str) -> ast.Module | None:
    """Longest leading run of lines that parses (models often trail off into prose)."""
    lines = code.splitlines()
    for end in range(len(lines), 0, -1):
        try:
            return ast.parse("\n".join(lines[:end]))
        except (SyntaxError, ValueError):
            continue
    return None
