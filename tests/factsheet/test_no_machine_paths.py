"""A factsheet names the files it rests on by name and sha256, never by the machine path it read them
from: no home directory, temporary folder or checkout path in any string of factsheet.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from factsheet.builder.provenance import recorded_engine
from probes.targets.mock_server import MockServerConfig, running
from probes.targets.model_source import ModelSource, PreparedModel
from probes.targets.vllm import VllmServer, VllmTarget
from tests.support.compliance_builds import build, spec_text
from tests.support.humaneval_path import DATASET
from tests.support.json_strings import json_strings

CHECKOUT = str(Path(__file__).resolve().parents[2])


def _tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    words = ["[UNK]", "the", "of", "and", "to", "a", "in", "is", "it", "you", "that", "was", "for", "on"]
    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    tok.save(str(path))


def test_factsheet_holds_no_machine_path(tmp_path, monkeypatch):
    folder = tmp_path / "spec"
    folder.mkdir()
    _tokenizer(folder / "tokenizer.json")
    # The command line as a shell hands it over: the program and the spec by absolute path.
    argv = [
        f"{Path.home()}/.venv/bin/factsheet",
        "build",
        str(folder / "model.yaml"),
        "-o",
        str(folder / "out"),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    with running(MockServerConfig(model="mock-model", ttft_ms=1, itl_ms=1)) as url:
        text = spec_text(url, "- {concurrency: 1, num_requests: 4}\n")
        text = text.replace(
            "model: mock-model}", f'model: mock-model, tokenizer_path: "{folder}/tokenizer.json"}}'
        )
        assert "tokenizer_path" in text
        result, out = build(folder, text)
    assert result.exit_code == 0, result.output
    sheet = json.loads((out / "factsheet.json").read_text())
    assert "tokenizer.json" in json.dumps(sheet)  # the tokenizer is named ...
    forbidden = [str(Path.home()), str(tmp_path), CHECKOUT]
    leaks = [s for s in json_strings(sheet) if any(f in s for f in forbidden)]
    assert not leaks, leaks  # ... and never by where it lay


@pytest.mark.parametrize("source", ["jsonl", "humaneval"])
def test_a_workload_records_its_file_by_name(tmp_path, source):
    from probes.load.workloads.workload import WorkloadConfig, build_workload

    data = tmp_path / "prompts.jsonl"
    data.write_text('{"prompt": "the of and"}\n')
    workload = build_workload(WorkloadConfig(source=source, path=str(data)), 2).workload
    assert workload.spec.path == "prompts.jsonl" and str(tmp_path) not in workload.model_dump_json()
    assert workload.file_digest.startswith("sha256:")


def test_the_humaneval_file_is_recorded_by_name(tmp_path):
    from probes.accuracy.dataset import load_dataset

    if not DATASET.is_file():
        pytest.skip("no HumanEval+ file beside the checkout")
    info = load_dataset(DATASET).info
    assert info.source == DATASET.name and info.sha256 and str(DATASET.parent) not in info.model_dump_json()


def test_served_weights_are_recorded_without_machine_folders(tmp_path, monkeypatch):
    from factsheet.builder.provenance import recorded_model
    from probes.targets.model_source import PreparedModel

    cache = tmp_path / "home" / ".cache" / "llm-factsheet"
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(cache))
    served = cache / "models" / "tiny-0123"
    served.mkdir(parents=True)
    _tokenizer(served / "tokenizer.json")
    elsewhere = tmp_path / "models" / "local"
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    converted = PreparedModel(
        source="pkg:tiny.gguf", served_path=str(served), tokenizer_path=str(served / "tokenizer.json")
    )
    recorded = recorded_model(converted, spec_dir)
    assert (recorded.served_path, recorded.tokenizer_path) == ("<cache>/models/tiny-0123", "tokenizer.json")
    assert recorded.digests["tokenizer.json"].startswith("sha256:")
    local = recorded_model(PreparedModel(source=str(elsewhere), served_path=str(elsewhere)), spec_dir)
    assert (local.source, local.served_path) == ("local", "local")
    beside = recorded_model(
        PreparedModel(source=str(spec_dir / "m"), served_path=str(spec_dir / "m")), spec_dir
    )
    assert (beside.source, beside.served_path) == ("m", "m")
    named = recorded_model(
        PreparedModel(source="Qwen/Qwen2.5-0.5B", served_path="Qwen/Qwen2.5-0.5B"), spec_dir
    )
    assert named.source == "Qwen/Qwen2.5-0.5B"


def test_the_embedded_targets_engine_command_names_no_machine_path(tmp_path, monkeypatch):
    """The vLLM target's command as the build records it (system.engine, shown on page 2): the serving python
    by name and the weights as `<cache>/…`, never the checkout's, home or temporary folder. The server is
    not started: its command is built as for a start (`VllmServer.command`) and recorded by the build's
    own `recorded_engine`."""
    cache = tmp_path / "home" / ".cache" / "llm-factsheet"
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(cache))
    weights = cache / "models" / "smollm2-q4_1"
    weights.mkdir(parents=True)
    python = tmp_path / "checkout" / ".venv-vllm" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")  # the target checks that the serving python exists
    target = VllmTarget(model=ModelSource(path="smollm2"), python=str(python), env={"HF_HOME": str(tmp_path)})
    server = VllmServer(target, PreparedModel(source="smollm2", served_path=str(weights)))
    engine = server.engine_info()  # no server answers /version here: version None, at once
    assert engine.command[0] == str(python) and str(weights) in engine.command  # what a start runs
    recorded = recorded_engine(engine, tmp_path / "spec")
    assert recorded.command[0] == "python"
    assert recorded.command[recorded.command.index("--model") + 1] == "<cache>/models/smollm2-q4_1"
    forbidden = [str(Path.home()), str(tmp_path), CHECKOUT]
    leaks = [s for s in json_strings(recorded.model_dump(mode="json")) if any(f in s for f in forbidden)]
    assert not leaks, leaks
