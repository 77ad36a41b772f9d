"""Any OpenAI-compatible server the user already runs."""

from __future__ import annotations

import os
from typing import Literal

import httpx
from pydantic import Field

from probes.core.measurement import Model
from probes.targets.errors import TargetError


class EndpointTarget(Model):
    kind: Literal["endpoint"] = "endpoint"
    base_url: str = Field(description="e.g. http://127.0.0.1:8000 (without /v1)")
    model: str = Field(description="model name sent in requests")
    api_key_env: str | None = Field(None, description="name of the environment variable holding the API key")
    supports_ignore_eos: bool = Field(False, description="server honours vLLM's 'ignore_eos' request field")
    tokenizer_path: str | None = Field(None, description="local tokenizer.json for exact prompt lengths")

    def api_key(self) -> str | None:
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise TargetError(f"target.api_key_env: environment variable {self.api_key_env} is not set")
        return key

    def check_reachable(self) -> dict:
        """GET /v1/models; returns the server's listing of this model (fields the server gave)."""
        url = self.base_url.rstrip("/") + "/v1/models"
        headers = {"Authorization": f"Bearer {self.api_key()}"} if self.api_key_env else {}
        try:
            resp = httpx.get(url, headers=headers, timeout=10)
        except httpx.HTTPError as exc:
            raise TargetError(f"target.base_url: cannot reach {url}: {type(exc).__name__}: {exc}") from exc
        if resp.status_code != 200:
            raise TargetError(f"target.base_url: {url} answered HTTP {resp.status_code}")
        try:
            listed = {m.get("id"): m for m in resp.json().get("data", [])}
        except ValueError as exc:
            raise TargetError(f"target.base_url: {url} did not answer JSON") from exc
        if self.model not in listed:
            raise TargetError(
                f"target.model: '{self.model}' not served at {self.base_url} (has: {sorted(listed)})"
            )
        return listed[self.model]
