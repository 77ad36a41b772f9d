"""The tool's settings from the environment: one model, each `FACTSHEET_*` variable named once
(pydantic-settings). Read at each call, so a variable set by a caller or a test counts from then on."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="FACTSHEET_", env_ignore_empty=True, extra="ignore", frozen=True
    )

    vllm_python: str | None = Field(
        None,
        description="the serving environment's python (torch, transformers, vLLM); else .venv-vllm/bin/python",
    )
    humaneval_path: str | None = Field(
        None, description="HumanEvalPlus JSONL(.gz) to read before the cache or the pinned download"
    )
    humaneval_url_base: str | None = Field(
        None, description="where the pinned HumanEvalPlus release is fetched from"
    )
    cache_dir: str | None = Field(None, description="the tool's cache (converted models, the dataset)")
    xdg_cache_home: str | None = Field(None, validation_alias="XDG_CACHE_HOME")

    def cache_root(self) -> Path:
        """FACTSHEET_CACHE_DIR, else $XDG_CACHE_HOME/llm-factsheet, else ~/.cache/llm-factsheet."""
        if self.cache_dir:
            return Path(self.cache_dir)
        return Path(self.xdg_cache_home or Path.home() / ".cache") / "llm-factsheet"


def settings() -> Settings:
    return Settings()
