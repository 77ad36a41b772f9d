"""The transformers runner's protocol, against a fake worker with known timing (tests/campaign/fake_hf_worker.py),
and (slow) against the real worker on the embedded model."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.support.humaneval_path import DATASET
from tests.support.procs import running
from tuner.campaign.hf_measurer import (
    RUNNER_CONSTRAINTS,
    HfMeasurer,
    WorkerError,
    from_options,
    runner_model_text,
)
from tuner.campaign.runner import run_campaign
from tuner.campaign.spec import CampaignSpec
from tuner.features.configs import kwargs_of
from tuner.features.derive import serving_python
from tuner.features.space import FeatureSpace
from tuner.features.uvl import parse_uvl

pytestmark = pytest.mark.system

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
FAKE = str(HERE / "fake_hf_worker.py")


def fake(mode: str = "normal", **kw) -> HfMeasurer:
    return HfMeasurer([sys.executable, FAKE, mode], **kw)


def test_figures_follow_the_workers_known_timing():
    m = fake(requests=3)
    try:
        f = m.measure({"request": {"max_new_tokens": 5}}, seed=1)
    finally:
        m.close()
    assert f["n_requests"] == 3 and f["tokens_mean"] == 5
    # the fake worker sleeps 30 ms before the first token and 10 ms per further token: never earlier
    assert 30 <= f["ttft_p50_ms"] < 2000
    assert 10 <= f["tpot_p50_ms"] < 2000
    assert f["e2el_p50_ms"] >= 30 + 4 * 10 and f["e2el_max_ms"] >= f["e2el_p50_ms"]
    assert f["e2el_p50_ms"] >= f["ttft_p50_ms"]
    assert f["energy"].startswith("not measured")
    assert "error" not in f


def test_cpu_seconds_are_the_workers_own():
    m = fake(requests=2)
    try:
        idle = m.measure({"request": {"max_new_tokens": 2}}, seed=0)["cpu_s"]
        busy = m.measure({"request": {"max_new_tokens": 2, "burn": 0.3}}, seed=0)["cpu_s"]
    finally:
        m.close()
    assert idle < 0.05  # sleeping costs (almost) no CPU
    # 2 × 0.3 CPU-seconds burned (process time, so a loaded host takes longer, not less): the tick is 10 ms
    assert 0.6 - 0.02 <= busy <= 0.6 + 0.05


def test_model_options_reload_only_when_they_change():
    m = fake()
    try:
        loads = [
            m.measure({"request": {}, "model": model}, seed=0)["load_s"]
            for model in ({"dtype": "float32"}, {"dtype": "float32"}, {"dtype": "bfloat16"})
        ]
    finally:
        m.close()
    assert loads == [0.5, 0.0, 0.5]


def test_a_configuration_the_library_refuses_is_recorded_with_its_error():
    m = fake()
    try:
        f = m.measure({"request": {"num_beam_groups": 2}}, seed=0)
        ok = m.measure({"request": {}}, seed=0)
    finally:
        m.close()
    assert f["error"] == "generation_failed: no groups here" and f["n_requests"] == 0
    assert "e2el_p50_ms" not in f
    assert ok["n_requests"] == 2  # the worker goes on


def test_texts_for_accuracy():
    m = fake()
    try:
        a = m.generate({"request": {}}, ["p1", [{"role": "user", "content": "hi"}]], seed=7, texts=True)
    finally:
        m.close()
    assert [r["text"] for r in a["results"]] == [
        "reply to 'p1' seed 7",
        "reply to [{'role': 'user', 'content': 'hi'}] seed 8",
    ]


@pytest.mark.skipif(not DATASET.exists(), reason="HumanEval+ data not beside the checkout")
def test_accuracy_option_generates_each_task_after_latency_with_the_configuration_capped(
    tmp_path, monkeypatch
):
    from tuner.campaign.accuracy import AccuracyOptions, load_subset

    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(tmp_path / "cache"))
    opts = AccuracyOptions(tasks=["HumanEval/0", "HumanEval/4"], max_tokens=6, mode="chat")
    m = fake(requests=1, accuracy=opts, subset=load_subset(opts.tasks, dataset=str(DATASET)))
    calls = []
    original = m.generate

    def spy(kwargs, prompts, **kw):
        calls.append((kwargs["request"]["max_new_tokens"], prompts, kw))
        return original(kwargs, prompts, **kw)

    m.generate = spy
    try:
        f = m.measure({"request": {"max_new_tokens": 8, "do_sample": True}}, seed=10)
    finally:
        m.close()
    latency, *accuracy = calls
    assert latency[0] == 8 and latency[2] == {"seed": 10}  # the latency requests come first, uncapped
    assert [c[0] for c in accuracy] == [6, 6]  # capped at max_tokens
    assert [c[2] for c in accuracy] == [
        {"seed": 10, "texts": True, "fixed_length": False},
        {"seed": 11, "texts": True, "fixed_length": False},
    ]
    assert all(isinstance(c[1][0], list) and c[1][0][-1]["role"] == "user" for c in accuracy)  # chat messages
    # the fake worker's replies are no programs: every task fails, and that is measured, not assumed
    assert f["accuracy_tasks"] == 2 and f["pass_at_1"] == 0.0 and f["pass_at_1_base"] == 0.0
    assert f["accuracy_generation_failures"] == 0 and f["e2el_p50_ms"] > 0


def test_worker_that_dies_is_an_error_and_the_next_measurement_starts_a_new_one():
    m = fake("die")
    try:
        m.measure({"request": {}}, seed=0)
        first = m.worker.ready["pid"]
        with pytest.raises(WorkerError, match="exited"):
            m.measure({"request": {}}, seed=0)
        assert m.measure({"request": {}}, seed=0)["n_requests"] == 2
        assert m.worker.ready["pid"] != first
    finally:
        m.close()


def test_worker_that_hangs_times_out_and_is_stopped():
    m = fake("hang", timeout_s=1.0)
    try:
        m._worker()
        pid = m.worker.ready["pid"]
        t0 = time.monotonic()
        with pytest.raises(WorkerError, match="did not answer within 1 s"):
            m.measure({"request": {}}, seed=0)
        assert time.monotonic() - t0 < 15
        deadline = time.monotonic() + 10
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(pid)
    finally:
        m.close()


@pytest.mark.parametrize(
    ("mode", "message"), [("garbage", "broke the protocol"), ("noready", "cannot load model")]
)
def test_broken_workers_are_named(mode, message):
    m = fake(mode)
    try:
        with pytest.raises(WorkerError, match=message):
            m.measure({"request": {}}, seed=0)
    finally:
        m.close()


def test_worker_dies_with_the_tool(tmp_path):
    pidfile = tmp_path / "pid"
    code = (
        "import sys, time; from pathlib import Path;"
        "from tuner.campaign.hf_measurer import HfMeasurer;"
        f"m = HfMeasurer([sys.executable, {FAKE!r}]); m.measure({{'request': {{}}}}, seed=0);"
        f"Path({str(pidfile)!r}).write_text(str(m.worker.ready['pid'])); time.sleep(600)"
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    tool = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        deadline = time.monotonic() + 60
        # write_text creates the file before it writes: an empty file is not yet the pid
        while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(pidfile.read_text())
        assert running(pid)
        tool.send_signal(signal.SIGKILL)
        tool.wait()
        deadline = time.monotonic() + 20
        while running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not running(pid), "the worker outlived the tool"
    finally:
        if tool.poll() is None:
            tool.kill()


def test_options_are_checked():
    with pytest.raises(ValueError, match="requests must be between 1 and 4"):
        HfMeasurer(["x"], requests=5)
    with pytest.raises(ValueError, match="give 'spec', or 'model_dir' and 'python'"):
        from_options(model_dir="/nowhere")
    with pytest.raises(ValueError, match="not a readable build spec"):
        from_options(spec=str(ROOT / "pyproject.toml"))
    with pytest.raises(ValueError, match="options.accuracy: tasks"):
        from_options(command=["x"], accuracy={"mode": "chat"})
    with pytest.raises(ValueError, match="needs a 'target' of kind vllm"):
        from_options(spec=str(ROOT / "models" / "endpoint-example.yaml"))


def test_campaign_with_the_runner_model_and_a_fake_worker(tmp_path):
    uvl = tmp_path / "generation_config_cpu.uvl"
    uvl.write_text(runner_model_text())
    spec = CampaignSpec.model_validate(
        {
            "feature_model": str(uvl),
            "sample": {"method": "uniform", "n": 4, "seed": 3},
            "repetitions": 2,
            "measurer": "tuner.campaign.hf_measurer:from_options",
            "options": {"command": [sys.executable, FAKE], "requests": 1},
        }
    )
    run_campaign(spec, tmp_path / "c")
    df = pd.read_parquet(tmp_path / "c" / "measurements.parquet")
    assert len(df) == 8 and df["e2el_p50_ms"].notna().all()
    assert (df["tokens_mean"] == df["config_id"].map(_max_new_tokens(tmp_path / "c"))).all()


@pytest.mark.skipif(not DATASET.exists(), reason="HumanEval+ data not beside the checkout")
def test_campaign_keeps_a_record_per_task_in_the_measurement_file_out_of_the_table(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(tmp_path / "cache"))
    uvl = tmp_path / "generation_config_cpu.uvl"
    uvl.write_text(runner_model_text())  # nothing the fake worker refuses (num_beam_groups)
    spec = CampaignSpec.model_validate(
        {
            "feature_model": str(uvl),
            "sample": {"method": "uniform", "n": 1, "seed": 3},
            "repetitions": 1,
            "measurer": "tuner.campaign.hf_measurer:from_options",
            "options": {
                "command": [sys.executable, FAKE],
                "requests": 1,
                "accuracy": {"tasks": 2, "max_tokens": 3, "mode": "completion", "dataset": str(DATASET)},
            },
        }
    )
    store = run_campaign(spec, tmp_path / "c")
    (row,) = store.rows()
    records = row["records"]["accuracy"]
    assert [r["task_id"] for r in records] == ["HumanEval/0", "HumanEval/1"]
    # the fake worker's replies ("reply to ... seed N") are no programs: each task's verdict is a measured fail
    for r, name in zip(records, ("has_close_elements", "separate_paren_groups"), strict=True):
        assert r["base"]["status"] == "fail" and r["plus"]["status"] == "fail" and r["base"]["n_inputs"] > 0
        assert r["reply"].startswith("reply to ") and f"def {name}(" in r["reply"]  # the task's own prompt
    assert row["figures"]["pass_at_1"] == 0.0 and row["figures"]["accuracy_tasks"] == 2
    assert "records" not in row["figures"]
    df = pd.read_parquet(tmp_path / "c" / "measurements.parquet")
    assert len(df) == 1 and not any("records" in c or "accuracy" == c for c in df.columns)
    assert df["pass_at_1"].tolist() == [0.0]


def _max_new_tokens(root: Path) -> dict:
    import json

    plan = json.loads((root / "plan.json").read_text())
    return {c["id"]: c["kwargs"]["request"]["max_new_tokens"] for c in plan["configs"]}


def test_runner_model_excludes_what_the_runner_cannot_run():
    space = FeatureSpace(parse_uvl(runner_model_text()))
    dead = set(space.dead_features())
    assert {"DiverseBeam", "cache_implementation_offloaded"} <= dead
    assert not space.satisfiable({"PromptLookup": True, "cache_implementation_static": True})
    assert space.satisfiable({"BeamSearch": True, "cache_implementation_static": True})
    assert not space.satisfiable({"PromptLookup": True, "NoKVCache": True})
    assert space.satisfiable({"Greedy": True, "NoKVCache": True})
    assert len(RUNNER_CONSTRAINTS) == 4


# --- the real worker on the embedded model (slow: loads torch and the model) --------------------------------

SLOW_SKIP = pytest.mark.skipif(
    serving_python() is None, reason="serving environment (.venv-vllm) not installed"
)


@pytest.mark.slow
@SLOW_SKIP
def test_real_worker_measures_two_configurations_and_refuses_what_the_runner_excludes():
    model = parse_uvl(runner_model_text())
    greedy = kwargs_of(model, ["Greedy", "MaxNewTokens", "max_new_tokens_32", "Dtype", "dtype_float32"])
    beams = kwargs_of(
        model,
        [
            "BeamSearch",
            "NumBeams",
            "num_beams_4",
            "MaxNewTokens",
            "max_new_tokens_32",
            "Dtype",
            "dtype_float32",
        ],
    )
    for kw in (greedy, beams):
        kw["request"]["max_new_tokens"] = 8  # short: the test measures the protocol, not the model
    m = from_options(spec=str(ROOT / "models" / "smollm2-cpu.yaml"), requests=1)
    try:
        g = m.measure(greedy, seed=0)
        b = m.measure(beams, seed=0)
        # what the runner's constraints exclude, the library refuses at generation time on this host
        refused = [
            m.measure({"request": {"max_new_tokens": 2, **extra}}, seed=0)
            for extra in (
                {"cache_implementation": "offloaded"},
                {"num_beams": 4, "num_beam_groups": 2, "diversity_penalty": 0.5},
                {"prompt_lookup_num_tokens": 3, "cache_implementation": "static"},
                {"prompt_lookup_num_tokens": 3, "use_cache": False},
            )
        ]
        strict = m.measure({"request": {"max_new_tokens": 2, "temperature": 0.6}}, seed=0)
        versions = m.worker.ready["versions"]
    finally:
        m.close()
    for f in (g, b):
        assert "error" not in f, f
        assert f["tokens_mean"] == 8 and f["n_requests"] == 1  # fixed length: min_new_tokens = max_new_tokens
        assert 0 < f["ttft_p50_ms"] < f["e2el_p50_ms"] and f["tpot_p50_ms"] > 0
        assert f["cpu_s"] > 0
    assert g["load_s"] > 0 and b["load_s"] == 0  # loaded once, reused
    # the proxy covers the generation window only, not the model's load: no more CPU-seconds than that window's
    # wall time on every core (+0.5 s for tokenizing). Which of greedy and four beams costs more is left out: on
    # 8 tokens torch's spinning threads decide it, and a busy host reversed it.
    for f in (g, b):
        assert f["cpu_s"] <= (f["e2el_p50_ms"] / 1000 + 0.5) * (os.cpu_count() or 1), f
    assert all(r["error"].startswith("generation_failed") for r in refused), refused
    assert strict["error"].startswith("invalid_config")  # validate(strict): temperature without sampling
    assert versions["transformers"] == model.root.attributes["library_version"]
