"""`factsheet build` runs the SLO-Tuner when the spec asks, and the factsheet keeps its trace.

Known truth: the mock server serves every request at once (no batch limit), 50 ms to the first token
then 5 ms a token, so each request takes ≈ 85 ms at any concurrency: goodput grows with concurrency
and the p99 SLO (400 ms) holds everywhere, so the best point is the largest concurrency offered.
An endpoint cannot be restarted: the batch-limit knob must be reported fixed, not silently ignored.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app

pytestmark = pytest.mark.system

TUNING = """\
tuning:
  slo_metric: e2el
  slo_p99_ms: 400
  start: {concurrency: 2, max_num_seqs: 16, spec_k: 0}
  knobs: {concurrency: [1, 2, 4, 8], max_num_seqs: [16, 32], spec_k: [0]}
  workload: {mode: closed, input_len: 16, output_len: 8, num_requests: 32}
  min_samples: 16
  max_evaluations: 16  # the search, plus 3 confirmation runs each of the default and the best
  time_budget_s: 120
"""


def test_tuning_section(tmp_path, mock_url, endpoint_spec):
    spec = endpoint_spec(tmp_path, mock_url, TUNING)
    result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    sheet = json.loads((tmp_path / "out" / "factsheet.json").read_text())
    tuning = sheet["tuning"]
    assert tuning["default"]["point"]["concurrency"] == 2
    assert tuning["recommended"]["point"]["concurrency"] == 8
    assert (
        tuning["recommended"]["figures"]["goodput"]["value"]
        > 2 * tuning["default"]["figures"]["goodput"]["value"]
    )
    assert len(tuning["trace"]) >= 3 and tuning["justification"]
    assert any(f["knob"] == "max_num_seqs" for f in tuning["fixed_knobs"])
    assert (tmp_path / "out" / "measurements" / "tuning.json").is_file()
    html = (tmp_path / "out" / "factsheet.html").read_text()
    assert "Tuner&#39;s climb: p99" in html and "Tuner&#39;s climb: goodput of each evaluation" in html
    assert "Simulator fidelity" in html and "Out of sample" in html
    # The recommendation was confirmed by fresh runs, and the factsheet says how likely each point meets the SLO.
    conf = tuning["confirmation"]
    assert conf["evaluations"] == sum(e["decision"] == "confirm" for e in tuning["trace"]) > 0
    for side in ("default", "recommended"):
        # Its value depends on how late a loaded host makes the mock (tests/tuner/test_confirm.py holds the
        # known-truth checks); here: stated, from the 3 fresh runs, with its basis.
        prob = tuning[side]["slo_probability"]
        assert 0.0 <= prob["value"] <= 1.0 and prob["runs"] == 3
        assert "fresh confirmation run" in tuning[side]["basis"]
    assert "P(meets SLO) in a fresh run" in html and "Student-t predictive" in html
