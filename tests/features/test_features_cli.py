import json

from typer.testing import CliRunner

from factsheet.cli.commands import app

runner = CliRunner()


def test_count_bundled_model():
    res = runner.invoke(app, ["features", "count", "vllm_serving"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert (out["features"], out["constraints"], out["valid_configurations"]) == (43, 3, 594_864)
    assert out["library"].startswith("vllm ")


def test_sample_writes_configurations_with_full_coverage(tmp_path):
    dest = tmp_path / "s.jsonl"
    res = runner.invoke(app, ["features", "sample", "vllm_serving", "-t", "2", "-o", str(dest)])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["coverage"]["2-wise"] == 1.0
    rows = [json.loads(line) for line in dest.read_text().splitlines()]
    assert len(rows) == out["size"] and "engine" in rows[0]["kwargs"]


def test_bad_model_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.uvl"
    bad.write_text("features\n    R\nconstraints\n    R => Nope\n")
    res = runner.invoke(app, ["features", "count", str(bad)])
    assert res.exit_code == 2
    assert "unknown feature(s): Nope" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["features", "sample", "vllm_serving", "-t", "5"])
    assert res.exit_code == 2
