"""The site's manifest: what each build's row was made from (every input file's sha256) and which diffs
exist, written for whoever reads the site. It is a record, never input: a site is output, restored perhaps
from a CI cache, a Pages branch or an archive that someone else could write to, so every run makes every row,
signature status and diff afresh from the sources and reads nothing back from here."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from factsheet.catalogue.rows import BuildRow
from factsheet.catalogue.signature import Signature
from factsheet.compliance.diff import Verdict
from probes.core.files import write_atomic
from probes.core.measurement import Model

MANIFEST_NAME = "manifest.json"
# 2: folders named by full digests, rows re-derived and marked, every diff verdict (never read back).
CATALOGUE_VERSION = "2"


class Entry(Model):
    row: BuildRow
    signature: Signature
    source: str = Field(
        description="the factsheet JSON as found: the given folder's name, then the path in it"
    )
    inputs: dict[str, str] = Field(
        description="every file beside the factsheet that decided the row or the signature (name relative to "
        "its folder) → sha256, as read in this run"
    )
    keys: list[str] = Field(description="key ids of the --pubkey files the signature was decided under")
    documents: list[str] = Field(
        description="the files in the build's folder of the site: the factsheet JSON as read, the pages this "
        "run rendered from it, and the attestation and compliance JSON as read (never the author's pages)"
    )

    @property
    def folder(self) -> str:
        """The build's folder in the site, named by its full digest (a build is never overwritten by another)."""
        return build_folder(self.row.sha256)


def build_folder(sha256: str) -> str:
    return f"builds/{sha256}"


class DiffEntry(Model):
    old: str = Field(description="sha256 of the older build's factsheet")
    new: str
    folder: str | None = Field(description="diffs/OLD-NEW in the site; None when no report could be made")
    verdict: Verdict | Literal["not_compared"] = Field(
        description="`factsheet diff`'s verdict, every one it can give; not_compared when no report was made"
    )
    verdict_reason: str = Field("", description="the verdict in diff's words")
    beyond_noise: list[str] = Field(
        default_factory=list, description="'figure@scope' of each change beyond noise (diff's own verdict)"
    )
    regressions: list[str] = Field(default_factory=list)
    reason: str | None = None

    @staticmethod
    def key(old: str, new: str) -> str:
        return f"{old}-{new}"


class Manifest(Model):
    catalogue_version: Literal["2"] = CATALOGUE_VERSION
    entries: dict[str, Entry] = Field(default_factory=dict, description="by the factsheet's sha256")
    diffs: dict[str, DiffEntry] = Field(default_factory=dict, description="by DiffEntry.key")


def write_manifest(site: Path, manifest: Manifest) -> Path:
    return write_atomic(site / MANIFEST_NAME, manifest.model_dump_json(indent=2).encode())
