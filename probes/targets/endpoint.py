"""Any OpenAI-compatible server the user already runs."""

from __future__ import annotations

import os
from typing import Literal

import httpx
from pydantic import Field

from probes.core.measurement import Model
from probes.targets.engines import EngineName
from probes.targets.errors import TargetError

API_SUFFIX = "/v1"


class EndpointTarget(Model):
    kind: Literal["endpoint"] = "endpoint"
    base_url: str = Field(
        description="e.g. http://127.0.0.1:8000 (without /v1; one ending in /v1 is read without it)"
    )
    model: str = Field(description="model name sent in requests")
    api_key_env: str | None = Field(None, description="name of the environment variable holding the API key")
    supports_ignore_eos: bool = Field(False, description="server honours vLLM's 'ignore_eos' request field")
    tokenizer_path: str | None = Field(None, description="local tokenizer.json for exact prompt lengths")
    check_model: bool = Field(
        True,
        description="refuse a target whose /v1/models does not list `model`; false: the listing is read when "
        "offered and the model is sent as given (a server that lists nothing, e.g. transformers serve on a "
        "local folder)",
    )
    engine: EngineName | Literal["auto"] = Field(
        "auto",
        description="the serving engine (docs/servers.md); auto: found from the server's own answers",
    )

    def api_key(self) -> str | None:
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise TargetError(f"target.api_key_env: environment variable {self.api_key_env} is not set")
        return key

    def root(self) -> tuple[str, list[str]]:
        """The server's root URL (the tool adds /v1/... itself), with a note when the spec's ended in /v1."""
        url = self.base_url.rstrip("/")
        if url.endswith(API_SUFFIX):
            root = url[: -len(API_SUFFIX)]
            return root, [
                f"target.base_url ends in {API_SUFFIX}: read as {root} (the tool adds {API_SUFFIX}/...)"
            ]
        return url, []

    def check_reachable(self) -> dict:
        """GET /v1/models; returns the server's listing of this model (fields the server gave)."""
        return self.read_listing()[0]

    def read_listing(self) -> tuple[dict, object, list[str]]:
        """(this model's entry, the whole answer, notes): /v1/models read in either shape (an object's `data`
        or a bare list). With check_model false a missing listing or model is a note, not an error."""
        root, notes = self.root()
        url = root + "/v1/models"
        headers = {"Authorization": f"Bearer {self.api_key()}"} if self.api_key_env else {}
        try:
            resp = httpx.get(url, headers=headers, timeout=10)
        except httpx.HTTPError as exc:
            raise TargetError(f"target.base_url: cannot reach {url}: {type(exc).__name__}: {exc}") from exc
        if resp.status_code != 200:
            if not self.check_model:  # transformers serve answers 500 where the hub cache does not exist
                return (
                    {},
                    None,
                    [*notes, f"/v1/models answered HTTP {resp.status_code}: not read (check_model false)"],
                )
            hint = " (base_url is the server's root, without /v1)" if resp.status_code == 404 else ""
            raise TargetError(f"target.base_url: {url} answered HTTP {resp.status_code}{hint}")
        try:
            body = resp.json()
        except ValueError as exc:
            raise TargetError(f"target.base_url: {url} did not answer JSON") from exc
        data = body.get("data") if isinstance(body, dict) else body
        if not isinstance(data, list):
            raise TargetError(
                f"target.base_url: {url} answered neither a model list nor an object with 'data'"
            )
        listed = {m.get("id"): m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)}
        if self.model in listed:
            return listed[self.model], body, notes
        if not self.check_model:
            return (
                {},
                body,
                [*notes, f"/v1/models does not list '{self.model}': sent as given (check_model false)"],
            )
        raise TargetError(
            f"target.model: '{self.model}' not served at {self.base_url} (has: {sorted(listed)}); set "
            "target.check_model: false if the server serves it without listing it"
        )
