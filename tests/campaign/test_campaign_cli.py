import json

from typer.testing import CliRunner

from factsheet.cli import app

runner = CliRunner()


def test_campaign_then_predict_from_the_cli(tmp_path):
    spec = tmp_path / "c.yaml"
    spec.write_text(
        "feature_model: vllm_serving\nsample: {method: uniform, n: 8, seed: 1}\nrepetitions: 2\n"
        "measurer: campaign_measurers:synthetic\n"
    )
    res = runner.invoke(app, ["campaign", str(spec), "-o", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output.strip().splitlines()[-1])["measured"] == 16
    res = runner.invoke(
        app,
        [
            "predict",
            str(tmp_path / "c"),
            "--targets",
            "e2el_p50_ms,pass_at_1",
            "--constraint",
            "e2el_p50_ms<=1e9",
            "--constraint",
            "pass_at_1>=0.0",
            "--verify-reps",
            "2",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads((tmp_path / "c" / "predictor.json").read_text())
    assert out["campaign"]["measurements"] == 16 and out["recommendation"] is not None
    assert out["verification"]["e2el_p50_ms"]["n"] == 2
    assert "pass_at_1" in out["summary"]["not_learnable"]
    # A constraint on a figure that is not learnable is met by a prediction close to the campaign's mean: said so.
    assert out["recommendation"]["notes"] == [
        f"pass_at_1: {out['targets']['pass_at_1']['learnability']['statement']}; its prediction is close to "
        "the campaign's mean"
    ]
    # What `factsheet predict` prints: the statement instead of an R² for the figure that is not learnable.
    printed = json.loads(res.output.strip().splitlines()[-1])
    assert printed["not_learnable"]["pass_at_1"].startswith(
        "not learnable at this model size: varies across configurations no more than its own sampling "
        "error (ANOVA p="
    )
    assert "pass_at_1" not in printed["r2_random_forest"] and "e2el_p50_ms" in printed["r2_random_forest"]


def test_bad_spec_and_bad_constraint_are_one_line_exit_2(tmp_path):
    spec = tmp_path / "c.yaml"
    spec.write_text("feature_model: vllm_serving\nrepetitions: 0\nmeasurer: x:y\n")
    res = runner.invoke(app, ["campaign", str(spec), "-o", str(tmp_path / "c")])
    assert res.exit_code == 2 and "repetitions" in res.output
    res = runner.invoke(app, ["predict", str(tmp_path), "--constraint", "pass_at_1>x"])
    assert res.exit_code == 2 and "--constraint" in res.output
