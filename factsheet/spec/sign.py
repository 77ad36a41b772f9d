"""The build spec's `sign:` section."""

from __future__ import annotations

from pydantic import Field

from probes.core.measurement import Model


class SignSpec(Model):
    """Sign the outputs with an Ed25519 key from `factsheet keygen`: writes factsheet.intoto.jsonl."""

    key: str = Field(
        description="private key file (PEM, PKCS#8); a relative path is relative to the spec file's folder"
    )
