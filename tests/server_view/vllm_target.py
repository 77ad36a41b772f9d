"""The embedded target of models/smollm2-cpu.yaml, served by this checkout's vLLM CPU build (or
$FACTSHEET_VLLM_PYTHON): what the fixture capture starts."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from probes.targets import VllmTarget

REPO = Path(__file__).resolve().parents[2]
SERVING_PYTHON = Path(os.environ.get("FACTSHEET_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))


def serving_target() -> VllmTarget:
    spec = yaml.safe_load((REPO / "models" / "smollm2-cpu.yaml").read_text())
    spec["target"]["python"] = str(SERVING_PYTHON)
    return VllmTarget.model_validate(spec["target"])
