"""The FACTSHEET_* environment, read through one settings model at each call."""

from __future__ import annotations

from pathlib import Path

from probes.accuracy.dataset import cache_dir as dataset_cache
from probes.core.settings import settings
from probes.targets.model_source import cache_dir as model_cache


def test_cache_root_prefers_the_tools_variable_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert settings().cache_root() == tmp_path / "mine"
    assert dataset_cache() == model_cache() == tmp_path / "mine"
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", "")  # empty counts as unset, as a shell's `X= cmd` means
    assert settings().cache_root() == tmp_path / "xdg" / "llm-factsheet"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(Path, "home", lambda: tmp_path / "home")
    assert model_cache() == tmp_path / "home" / ".cache" / "llm-factsheet"


def test_each_variable_is_read_when_asked(monkeypatch):
    monkeypatch.setenv("FACTSHEET_VLLM_PYTHON", "/opt/serve/bin/python")
    monkeypatch.setenv("FACTSHEET_HUMANEVAL_PATH", "he.jsonl.gz")
    read = settings()
    assert (read.vllm_python, read.humaneval_path) == ("/opt/serve/bin/python", "he.jsonl.gz")
    monkeypatch.delenv("FACTSHEET_VLLM_PYTHON")
    assert settings().vllm_python is None
