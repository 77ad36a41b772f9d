"""Every document renders through the one public API of factsheet.render, and writes its files as a set.

Known truth: the compliance report and the diff once imported `factsheet.render._environment` and wrote
their JSON and HTML before printing the PDF, so a failed print left half a report behind.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from factsheet.compliance import render as compliance_render
from factsheet.compliance.evaluate import evaluate
from tests.support import sheet_fixture as fx

ROOT = Path(__file__).parents[2]
PACKAGES = ("factsheet", "probes", "tuner")


def test_no_module_imports_another_modules_private_names():
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ImportFrom) or not node.module:
                    continue
                if node.module.split(".")[0] not in PACKAGES:
                    continue
                own_package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
                for alias in node.names:
                    private = alias.name.startswith("_") and not alias.name.startswith("__")
                    # a package may use its own private submodules (`from probes.accuracy import _runner`)
                    if private and node.module != own_package:
                        found.append(f"{path.relative_to(ROOT)}: from {node.module} import {alias.name}")
    assert not found, found


@pytest.mark.pdf
def test_a_compliance_report_whose_pdf_fails_leaves_no_file(tmp_path, monkeypatch):
    report = evaluate(fx.empty_sheet(), [], folder=None, factsheet_path="factsheet.json",
                      factsheet_sha256="sha256:" + "0" * 64)  # fmt: skip

    import weasyprint

    def fails(*args, **kwargs):
        raise RuntimeError("printer on fire")

    monkeypatch.setattr(weasyprint.HTML, "write_pdf", fails)  # the PDF/A printing, under every writer
    with pytest.raises(RuntimeError, match="printer on fire"):
        compliance_render.write_report(report, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
