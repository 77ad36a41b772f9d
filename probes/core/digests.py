"""The one digest of the tool: sha256, written `"sha256:<64 hex>"` wherever a factsheet or record names one.

Bytes, files (read in blocks, so a large records file or model never sits in memory whole) and structured
things (canonical JSON: keys sorted, no spaces, pydantic models by their JSON form) all go through here, so
two places can never disagree on how a digest is spelled. in-toto's DigestSet wants the bare hex: `bare`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel

PREFIX = "sha256:"
BLOCK = 1 << 20  # 1 MiB reads: constant memory for files of any size


def prefixed(hex_digest: str) -> str:
    return PREFIX + hex_digest


def bare(digest: str) -> str:
    """The hex part of `"sha256:<hex>"` (a bare hex passes unchanged)."""
    return digest[len(PREFIX) :] if digest.startswith(PREFIX) else digest


def sha256_bytes(data: bytes) -> str:
    return prefixed(hashlib.sha256(data).hexdigest())


def update_from(hasher: Any, stream: BinaryIO) -> None:
    """Feed `stream` to `hasher` block by block, to its end."""
    for block in iter(lambda: stream.read(BLOCK), b""):
        hasher.update(block)


def sha256_file(path: Path | str) -> str:
    """Digest of a file's bytes, read in blocks; an unreadable file raises OSError (callers name it)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        update_from(h, fh)
    return prefixed(h.hexdigest())


def sha256_json(obj: Any) -> str:
    """Digest of `obj` as canonical JSON (keys sorted, no spaces; pydantic models by their JSON form)."""

    def plain(x: object) -> object:
        if isinstance(x, BaseModel):
            return json.loads(x.model_dump_json())
        if isinstance(x, list | tuple):
            return [plain(v) for v in x]
        if isinstance(x, dict):
            return {str(k): plain(v) for k, v in x.items()}
        return x

    return sha256_bytes(json.dumps(plain(obj), sort_keys=True, separators=(",", ":")).encode())
