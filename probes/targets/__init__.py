"""Serving targets the probes drive: a user's endpoint, or a vLLM server the tool starts and stops."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated

from pydantic import Field, PrivateAttr

from probes.core.measurement import Model
from probes.hostload.listener import local_server_pid
from probes.targets.deployment import DeploymentFacts, endpoint_facts, served_facts
from probes.targets.endpoint import EndpointTarget
from probes.targets.engines import BY_NAME, Engine, EngineIdentity, identify
from probes.targets.errors import TargetError
from probes.targets.isolation import FRESH_START, Isolation
from probes.targets.model_source import GGUFSource, ModelSource, PreparedModel, prepare
from probes.targets.vllm import EngineInfo, VllmServer, VllmTarget

TargetSpec = Annotated[EndpointTarget | VllmTarget, Field(discriminator="kind")]


class LiveTarget(Model):
    """A target that is up: what the probes need to reach it, and what the factsheet records of it."""

    kind: str
    base_url: str
    model: str
    api_key: str | None = Field(None, exclude=True)  # never written into outputs
    supports_ignore_eos: bool
    tokenizer_path: str | None = None
    engine: EngineInfo | None = None
    prepared_model: PreparedModel | None = None
    deployment: DeploymentFacts | None = Field(
        None, description="chat template and generation defaults as served (None: not read)"
    )
    server_listing: dict = Field(default_factory=dict)
    server_pid: int | None = Field(
        None,
        exclude=True,
        description="the server's process, the embedded one or an endpoint's on this host found by its port "
        "(its CPU is measured apart from others)",
    )
    identity: EngineIdentity | None = Field(None, description="the serving engine, found before measuring")
    _server: VllmServer | None = PrivateAttr(None)  # the server the tool started, if it did

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def adapter(self) -> Engine:
        return BY_NAME[self.identity.engine if self.identity is not None else "vllm"]

    def isolate(self) -> Isolation:
        """Separate the next run from the last: a fresh start of a server the tool started (same port),
        else the engine's prefix-cache reset (stated, whether or not it worked, or that it offers none)."""
        if self._server is None:
            return self.adapter().reset_cache(self.base_url, self.api_key)
        self._server.restart()  # a failed start raises TargetError, as at the build's start
        self.server_pid = self._server.pid
        return Isolation(method=FRESH_START, done=True, detail="stopped, started again, /v1/models answered")


@contextlib.contextmanager
def open_target(
    config: EndpointTarget | VllmTarget, *, flags: list[str] | None = None
) -> Iterator[LiveTarget]:
    if isinstance(config, EndpointTarget):
        listing, answer, notes = config.read_listing()
        root, key = config.root()[0], config.api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        identity, _ = identify(root, headers, config.model, stated=config.engine, listing=answer, notes=notes)
        yield LiveTarget(
            kind="endpoint",
            base_url=root,
            model=config.model,
            api_key=key,
            supports_ignore_eos=config.supports_ignore_eos,
            tokenizer_path=config.tokenizer_path,
            server_listing=listing,
            deployment=endpoint_facts(),
            identity=identity,
            server_pid=local_server_pid(root),
        )
        return
    prepared = prepare(config.model, config.serving_python())
    server = VllmServer(config, prepared, flags=flags)
    # Read before the start: a malformed template or config the engine would load is exit 2 at once.
    deployment = served_facts(prepared.served_path, server.command())
    with server:
        live = LiveTarget(
            kind="vllm",
            base_url=server.base_url,
            model=config.served_model_name,
            supports_ignore_eos=True,
            tokenizer_path=prepared.tokenizer_path,
            engine=server.engine_info(),
            prepared_model=prepared,
            deployment=deployment,
            server_pid=server.pid,
            identity=identify(server.base_url, {}, config.served_model_name, stated="vllm")[0],
        )
        live._server = server
        yield live


__all__ = [
    "DeploymentFacts",
    "EndpointTarget",
    "EngineInfo",
    "GGUFSource",
    "Isolation",
    "LiveTarget",
    "ModelSource",
    "PreparedModel",
    "TargetError",
    "TargetSpec",
    "VllmServer",
    "VllmTarget",
    "open_target",
]
