"""The site's manifest: what each build's row was read from (every input file's sha256) and which diffs
exist, so a rebuild reads only new or changed factsheets."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from factsheet.catalogue.rows import BuildRow
from factsheet.catalogue.signature import Signature
from probes.core.files import write_atomic
from probes.core.measurement import Model

MANIFEST_NAME = "manifest.json"
CATALOGUE_VERSION = "1"


class Entry(Model):
    row: BuildRow
    signature: Signature
    source: str = Field(description="the factsheet JSON as found (the path given on the command line)")
    inputs: dict[str, str] = Field(
        description="every file beside the factsheet that decided the row or the signature (name relative to "
        "its folder) → sha256; all equal on a rebuild: the entry is reused without reading the factsheet"
    )
    keys: list[str] = Field(description="key ids of the --pubkey files the signature was decided under")
    copied: list[str] = Field(description="file names copied into the build's folder of the site")

    @property
    def folder(self) -> str:
        """The build's folder in the site, named by its digest (a build is never overwritten by another)."""
        return f"builds/{self.row.sha256[:16]}"


class DiffEntry(Model):
    old: str = Field(description="sha256 of the older build's factsheet")
    new: str
    folder: str | None = Field(description="diffs/OLD-NEW in the site; None when no report could be made")
    verdict: Literal["no_regression", "regression", "not_compared"]
    beyond_noise: list[str] = Field(
        default_factory=list, description="'figure@scope' of each change beyond noise (diff's own verdict)"
    )
    regressions: list[str] = Field(default_factory=list)
    reason: str | None = None

    @staticmethod
    def key(old: str, new: str) -> str:
        return f"{old[:16]}-{new[:16]}"


class Manifest(Model):
    catalogue_version: Literal["1"] = CATALOGUE_VERSION
    entries: dict[str, Entry] = Field(default_factory=dict, description="by the factsheet's sha256")
    diffs: dict[str, DiffEntry] = Field(default_factory=dict, description="by DiffEntry.key")


def read_manifest(site: Path) -> Manifest | None:
    """The previous run's manifest; None when there is none. One that does not parse (an older catalogue, a
    hand edit) is not trusted: everything is read again."""
    path = site / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        return Manifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return Manifest()


def write_manifest(site: Path, manifest: Manifest) -> Path:
    return write_atomic(site / MANIFEST_NAME, manifest.model_dump_json(indent=2).encode())
