"""The CLI modules only turn flags into one API call and print its result: an AST walk of every cli module
fails on an output file name, a write, a document shaped from a result, or a second grammar parsed there.
The same walk over excerpts of the CLI as it was before factsheet.api shows that the rules can fail."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import factsheet.document.files as outputs

ROOT = Path(__file__).resolve().parents[2]
# the command modules (the progress bars and the stop signals beside them are not commands)
CLI_MODULES = sorted(
    p for p in ROOT.glob("factsheet/cli/*.py") if p.name not in ("__init__.py", "progress.py", "signals.py")
)
FILE_NAME = re.compile(r"^[\w.-]+\.(json|jsonl|jsonld|html|pdf|xml|md|yaml|yml|key|pub|txt|csv)$")
NAMES = {v for k, v in vars(outputs).items() if k.isupper() and isinstance(v, str)}
FILES = {n for n in NAMES if "." in n}  # a folder's name ("records", "out") is caught as a path's start
FOLDERS = tuple(n + "/" for n in NAMES if "." not in n)
WRITES = {"write_atomic", "write_text", "write_bytes", "dump", "loads", "open"}  # loads: reshaping a result
COMPARISONS = {">=", "<=", "==", "!=", ">", "<"}  # the words of a constraint grammar


def violations(source: str) -> list[str]:
    """Each business-logic construct in a CLI module's source, as 'line: what'."""
    tree = ast.parse(source)
    helps = {
        id(kw.value) for node in ast.walk(tree) for kw in getattr(node, "keywords", []) if kw.arg == "help"
    }
    found = []
    for node in ast.walk(tree):
        where = f"{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in helps:
            text = node.value
            if FILE_NAME.match(text) or text in FILES or text.startswith(FOLDERS):
                found.append(f"{where}: output file name {text!r}")
            if text in COMPARISONS:
                found.append(f"{where}: a comparison operator {text!r} parsed here (a second grammar)")
        elif isinstance(node, ast.ImportFrom) and node.module in ("factsheet.document.files", "re"):
            found.append(f"{where}: imports {node.module}")
        elif isinstance(node, ast.Import) and any(
            a.name in ("re", "factsheet.document.files") for a in node.names
        ):
            found.append(f"{where}: imports {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in WRITES:
                found.append(f"{where}: calls {name}")
    return found


@pytest.mark.parametrize("path", CLI_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_cli_module_holds_no_business_logic(path):
    assert violations(path.read_text(encoding="utf-8")) == []


def test_every_cli_module_is_walked():
    names = {str(p.relative_to(ROOT)) for p in CLI_MODULES}
    assert {"factsheet/cli/commands.py", "factsheet/cli/probe.py", "factsheet/cli/predictor.py", "factsheet/cli/eval.py",
            "factsheet/cli/common.py", "factsheet/cli/attest.py", "factsheet/cli/compliance.py",
            "factsheet/cli/export.py", "factsheet/cli/publish.py", "factsheet/cli/catalogue.py"} <= names  # fmt: skip


# Excerpts of the CLI before factsheet.api (commit f33567e): each must be caught.
OLD_BUILD = """
from factsheet.document.files import FACTSHEET_JSON
def build(spec, output, sign_key):
    out_dir = output or Path(parsed.output_dir or f"out/{parsed.name}")
    paths.append(sign_factsheet(out_dir / FACTSHEET_JSON, signer, gate.verdict(), sheet=sheet))
"""
OLD_PROBE = """
import re
_GOODPUT = re.compile(r"^(ttft|tpot|e2el):(\\d+(?:\\.\\d+)?)$")
def load(output):
    doc = json.loads(result.model_dump_json())
    doc["records_file"] = "records.jsonl"
    write_atomic(output / "result.json", json.dumps(doc, indent=2).encode())
"""
OLD_PREDICT = """
def predict(constraint):
    for c in constraint or []:
        for op in (">=", "<="):
            if op in c:
                name, _, value = c.partition(op)
"""


@pytest.mark.parametrize(
    ("source", "needles"),
    [
        (OLD_BUILD, ["imports factsheet.document.files", "output file name 'out/'"]),
        (OLD_PROBE, ["imports re", "calls loads", "output file name 'records.jsonl'", "calls write_atomic"]),
        (OLD_PREDICT, ["comparison operator '>='", "comparison operator '<='"]),
    ],
)
def test_the_walk_catches_the_old_cli(source, needles):
    found = "\n".join(violations(source))
    for needle in needles:
        assert needle in found
