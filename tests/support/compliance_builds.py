"""Factsheets built against the mock server, whose timing is known: thresholds either side are known.

The mock sends the first token 20 ms after admission and one every 5 ms after it (8 tokens asked), so a
request's E2EL is at least 20 + 7 × 5 = 55 ms on any host: a client can see it late, never early. A
threshold below 55 ms therefore fails on every host, one of 5 s passes with wide slack on a busy one.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from typer.testing import CliRunner

from factsheet.cli.commands import app

runner = CliRunner()
MIN_E2EL_MS = 20 + 7 * 5


def spec_text(base_url: str, points: str, extra: str = "", output_len: int = 8) -> str:
    """An endpoint spec with an SLO of 5 s on E2EL (every mock request here meets it)."""
    return (
        textwrap.dedent(f"""\
        spec_version: 1
        name: mock-compliance
        model: {{name: mock-model}}
        target: {{kind: endpoint, base_url: "{base_url}", model: mock-model}}
        load:
          input_len: 16
          output_len: {output_len}
          slo: {{e2el_ms: 5000}}
          points:
        """)
        + textwrap.indent(textwrap.dedent(points), "    ")
        + extra
    )


def build(folder: Path, text: str, policies: dict[str, str] | None = None, *args: str):
    """`factsheet build` in-process; policies are written beside the spec. Returns (result, out folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in (policies or {}).items():
        (folder / name).write_text(textwrap.dedent(body))
    spec = folder / "model.yaml"
    spec.write_text(text)
    out = folder / "out"
    return runner.invoke(app, ["build", str(spec), "-o", str(out), *args]), out


# A gated build: a spec whose `compliance:` section names gate.yaml, written beside it.
GATE = "compliance: {policies: [gate.yaml]}\n"
GATE_POINTS = "- {concurrency: 4, num_requests: 24}\n"


def gated_build(folder: Path, base_url: str, policy: str, *args: str):
    """`factsheet build` of GATE_POINTS with `policy` as its gate (gate.yaml). Returns (result, out folder)."""
    return build(folder, spec_text(base_url, GATE_POINTS, GATE), {"gate.yaml": policy}, *args)
