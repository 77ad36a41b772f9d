"""The API page's example (docs/api.md, "Use from Python") runs as written (against the mock server, in a fresh folder), and
`import factsheet` stays cheap: the pipeline is imported only when one of its names is used."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.api_helpers import endpoint_spec, files_under

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
API_PAGE = ROOT / "docs" / "api.md"


def api_example() -> str:
    text = API_PAGE.read_text(encoding="utf-8")
    assert text.startswith("# Use from Python\n")  # the page is that one section
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def test_the_api_example_runs(tmp_path, monkeypatch, mock_url):
    endpoint_spec(tmp_path, mock_url)  # model.yaml, as the example expects
    monkeypatch.chdir(tmp_path)
    names: dict = {"__name__": "api_page"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(api_example(), str(API_PAGE), "exec"), names)
    build, gate, signed, card = names["build"], names["gate"], names["signed"], names["card"]
    assert build.exit_code == 0 and signed.attestation.is_file() and card.document.is_file()
    # The gate's verdict is the one written and signed; the files the calls name are those in the folder.
    report = json.loads(gate.written[0].read_text())
    assert report["verdict"] == gate.verdict and names["exit_code"] == gate.exit_code
    named = {tmp_path / p for p in (*build.files, *gate.written, *signed.written, *card.written)}
    assert files_under(tmp_path / "out" / "release") == named
    assert "model card:" in printed.getvalue() and "signed by" in printed.getvalue()


def test_import_factsheet_does_not_import_the_pipeline():
    code = (
        "import sys, factsheet\n"
        "before = sorted(m for m in sys.modules if m.startswith(('factsheet.', 'probes', 'tuner')))\n"
        "from factsheet import build_factsheet, check_factsheet, verify_factsheet\n"
        "print(before, build_factsheet.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == ["[]", "factsheet.api.build"]


def test_factsheet_exports_exactly_the_api():
    import factsheet
    import factsheet.api as api

    assert sorted(factsheet.__all__) == sorted(api.EXPORTS)
    for name in factsheet.__all__:
        assert getattr(factsheet, name) is api.resolve(name)
