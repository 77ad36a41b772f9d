"""The demo (`make demo`, models/smollm2-cpu.yaml): its headline rests on enough samples, and the
factsheet says why the load is shaped as it is (load.rationale, spec → JSON → HTML)."""

from pathlib import Path

from factsheet.builder.pipeline import build
from factsheet.render import render_html
from factsheet.spec.build import load_spec
from probes.load.metrics import CLAIM_CONFIDENCE
from probes.load.stats import min_samples

DEMO = Path(__file__).resolve().parents[2] / "models" / "smollm2-cpu.yaml"


def test_the_demo_confirmation_measures_enough_samples_for_its_p99_claim():
    spec, _ = load_spec(DEMO)
    cap, load = spec.load.capacity, spec.load
    measured = cap.confirm_requests - load.warmup_requests - load.cooldown_requests
    # MLPerf early stopping: 459 samples with none over the threshold back a p99 claim at 99 %.
    assert measured >= min_samples(99.0, 0, CLAIM_CONFIDENCE) == 459
    assert spec.load.rationale and "459" in spec.load.rationale


def test_the_rationale_travels_from_the_spec_into_the_factsheet_and_its_page(
    tmp_path, mock_url, endpoint_spec
):
    why = "short replies <so> the confirmation fits 15 minutes"
    spec_path = endpoint_spec(tmp_path, mock_url, extra=f'  rationale: "{why}"\n')
    spec, raw = load_spec(spec_path)
    sheet = build(spec, spec_path, raw, tmp_path / "out", log=lambda _: None)
    assert sheet.load.rationale == why
    html = render_html(sheet)
    assert "short replies &lt;so&gt; the confirmation fits 15 minutes" in html  # escaped, not markup
    assert "<so>" not in html


def test_a_spec_without_a_rationale_says_nothing(tmp_path, mock_url, endpoint_spec):
    spec_path = endpoint_spec(tmp_path, mock_url)
    spec, raw = load_spec(spec_path)
    sheet = build(spec, spec_path, raw, tmp_path / "out", log=lambda _: None)
    assert sheet.load.rationale is None
    assert "Why this load" not in render_html(sheet)
