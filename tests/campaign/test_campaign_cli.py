import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from tests.support.fake_http import serving_release
from tests.support.humaneval_path import DATASET

pytestmark = pytest.mark.system

runner = CliRunner()


def test_campaign_then_predict_from_the_cli(tmp_path):
    spec = tmp_path / "c.yaml"
    spec.write_text(
        "feature_model: vllm_serving\nsample: {method: uniform, n: 8, seed: 1}\nrepetitions: 2\n"
        "measurer: tests.support.campaign_measurers:synthetic\n"
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
    # beside the forest (the paper's model), the model that cross-validates best: the recommendation's
    chosen = out["targets"]["e2el_p50_ms"]["selection"]
    assert printed["best_model"] == {
        "e2el_p50_ms": {"kind": chosen["kind"], "r2": round(chosen["cv"]["r2"]["mean"], 3)}
    }
    assert out["recommendation"]["predicted"]["e2el_p50_ms"]["model"] == chosen["kind"]


def test_bad_spec_and_bad_constraint_are_one_line_exit_2(tmp_path):
    spec = tmp_path / "c.yaml"
    spec.write_text("feature_model: vllm_serving\nrepetitions: 0\nmeasurer: x:y\n")
    res = runner.invoke(app, ["campaign", str(spec), "-o", str(tmp_path / "c")])
    assert res.exit_code == 2 and "repetitions" in res.output
    res = runner.invoke(app, ["predict", str(tmp_path), "--constraint", "pass_at_1>x"])
    assert res.exit_code == 2 and "--constraint" in res.output


# --- the measurers' `accuracy` option is checked with the spec: before anything is measured or started ---

ROOT = Path(__file__).resolve().parents[2]
VLLM = f"measurer: tuner.campaign.vllm_measurer:from_options\noptions: {{spec: {ROOT / 'models' / 'smollm2-cpu.yaml'}, "
NAMED = {"dataset": str(DATASET)}
BAD_ACCURACY = [  # (accuracy option, environment, the field the one line names)
    ({"tasks": 0}, {}, "options.accuracy.tasks: Value error, needs at least one task"),
    ({"tasks": 2, "mode": "poetry"}, {}, "options.accuracy.mode: Input should be 'chat' or 'completion'"),
    ({"tasks": 2, "max_tokens": -1}, {}, "options.accuracy.max_tokens: Input should be greater than"),
    ({"tasks": 2, "colour": "red"}, {}, "options.accuracy.colour: Extra inputs are not permitted"),
    ({"tasks": 2, "dataset": "/nonexistent/he.jsonl.gz"}, {}, "options.accuracy: Value error, dataset"),
    (
        {"tasks": ["HumanEval/0", "HumanEval/9999"], **NAMED},
        {},
        "options.accuracy: Value error, tasks: task_id 'HumanEval/9999' is not in dataset HumanEval+",
    ),
    (  # the dataset named by the environment, as the measurer would resolve it
        {"tasks": ["HumanEval/9999"]},
        {"FACTSHEET_HUMANEVAL_PATH": str(DATASET)},
        "options.accuracy: Value error, tasks: task_id 'HumanEval/9999' is not in dataset HumanEval+",
    ),
]
BAD_IDS = ["tasks-0", "mode", "max_tokens", "unknown-key", "no-dataset", "unknown-id", "unknown-id-env"]
needs_dataset = pytest.mark.skipif(not DATASET.exists(), reason="HumanEval+ data not beside the checkout")


def _one_line_exit_2(res, field: str, out: Path) -> None:
    assert res.exit_code == 2, res.output
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and field in lines[0], lines
    assert "Traceback" not in res.output
    assert not out.exists(), "bad input must write nothing"


@needs_dataset
@pytest.mark.parametrize(("accuracy", "env", "field"), BAD_ACCURACY, ids=BAD_IDS)
def test_bad_accuracy_option_is_refused_with_the_campaign_spec(tmp_path, monkeypatch, accuracy, env, field):
    monkeypatch.setenv(
        "FACTSHEET_CACHE_DIR", str(tmp_path / "cache")
    )  # never the user's cache, never a download
    monkeypatch.delenv("FACTSHEET_HUMANEVAL_PATH", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    spec = tmp_path / "c.yaml"
    spec.write_text(
        f"feature_model: vllm_serving\nrepetitions: 1\n{VLLM}accuracy: {json.dumps(accuracy)}}}\n"
    )
    res = runner.invoke(app, ["campaign", str(spec), "-o", str(tmp_path / "c")])
    _one_line_exit_2(res, field, tmp_path / "c")


@needs_dataset
@pytest.mark.parametrize(
    ("accuracy", "env", "field"), BAD_ACCURACY[:1] + BAD_ACCURACY[-2:-1], ids=["0", "9999"]
)
def test_bad_accuracy_option_is_refused_with_the_build_spec(tmp_path, monkeypatch, accuracy, env, field):
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FACTSHEET_HUMANEVAL_PATH", raising=False)
    campaign = {
        "feature_model": "vllm_serving",
        "measurer": "tuner.campaign.vllm_measurer:from_options",
        "options": {"spec": str(ROOT / "models" / "smollm2-cpu.yaml"), "accuracy": accuracy},
    }
    spec = tmp_path / "b.yaml"
    spec.write_text(
        (ROOT / "models" / "endpoint-example.yaml").read_text()
        + f"predictor: {json.dumps({'campaign': campaign})}\n"
    )
    res = runner.invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    _one_line_exit_2(res, f"predictor.campaign.{field}", tmp_path / "out")


@needs_dataset
def test_good_accuracy_option_passes_the_check(monkeypatch):
    from tuner.campaign.spec import CampaignSpec

    monkeypatch.delenv("FACTSHEET_HUMANEVAL_PATH", raising=False)
    options = {"accuracy": {"tasks": ["HumanEval/0", "HumanEval/163"], **NAMED}}
    spec = CampaignSpec.model_validate(
        {"feature_model": "vllm_serving", "measurer": "a:b", "options": options}
    )
    assert spec.options == options  # checked, handed to the factory unchanged


def _spec_with_unknown_task_id(tmp_path: Path) -> Path:
    spec = tmp_path / "c.yaml"
    spec.write_text(
        f'feature_model: vllm_serving\nrepetitions: 1\n{VLLM}accuracy: {{tasks: ["HumanEval/9999"]}}}}\n'
    )
    return spec


@needs_dataset
def test_unknown_task_id_of_the_cached_dataset_is_refused_with_the_spec(tmp_path, monkeypatch):
    from probes.accuracy.dataset import HUMANEVALPLUS_FILE

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / HUMANEVALPLUS_FILE).symlink_to(DATASET)  # the pinned release, as a download leaves it
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(cache))
    monkeypatch.delenv("FACTSHEET_HUMANEVAL_PATH", raising=False)
    res = runner.invoke(
        app, ["campaign", str(_spec_with_unknown_task_id(tmp_path)), "-o", str(tmp_path / "c")]
    )
    _one_line_exit_2(res, "options.accuracy: Value error, tasks: task_id 'HumanEval/9999'", tmp_path / "c")


@needs_dataset
def test_unknown_task_id_of_a_dataset_still_to_download_is_refused_before_the_plan_is_written(
    tmp_path, monkeypatch
):
    """A dataset not yet on this machine is not fetched to check a spec: the measurer, built before the
    campaign's plan is written or a server started, finds the unknown id."""
    with serving_release(DATASET.read_bytes()) as url:  # the pinned release, served locally
        monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("FACTSHEET_HUMANEVAL_URL_BASE", url)
        monkeypatch.delenv("FACTSHEET_HUMANEVAL_PATH", raising=False)
        res = runner.invoke(
            app, ["campaign", str(_spec_with_unknown_task_id(tmp_path)), "-o", str(tmp_path / "c")]
        )
    _one_line_exit_2(res, "measurer: cannot build", tmp_path / "c")
    assert "task_id 'HumanEval/9999' is not in dataset HumanEval+" in res.stderr
