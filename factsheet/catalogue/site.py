"""`factsheet catalogue DIR… -o SITE`: find every factsheet under the folders, read the new or changed ones,
diff consecutive builds of each deployment, and write the static site (see pages.py for what it shows).

Everything is read and decided before the first byte is written: bad input (a path that is not a folder, a
malformed factsheet, a bad key) leaves the site as it was."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from factsheet.catalogue.manifest import DiffEntry, Entry, Manifest, read_manifest, write_manifest
from factsheet.catalogue.rows import DIFF_FIGURE, FIGURE_KEYS, build_row
from factsheet.catalogue.signature import TrustedKey, load_keys, signature_of
from factsheet.outputs import (
    ATTESTATION,
    COMPLIANCE_FILES,
    COMPLIANCE_JSON,
    DIFF_HTML,
    FACTSHEET_JSON,
    RENDERINGS,
)
from factsheet.schema import Factsheet
from probes.core.digests import bare, sha256_file
from probes.core.errors import CheckFailed, InputError
from probes.core.files import together, write_atomic

# Copied beside each build in the site when present (never the raw records: they can be large, and the
# figures the site shows were read from them at build time and are re-derivable from the source folder).
DOCUMENTS = (FACTSHEET_JSON, *RENDERINGS, ATTESTATION, *COMPLIANCE_FILES)
# A document larger than this is not copied into the site (a factsheet's PDF is a few MiB; a folder someone
# else filled must not make the catalogue copy without bound); its link is left out of the pages.
MAX_DOCUMENT_BYTES = 256 << 20


class CatalogueError(InputError):
    """A catalogue asked for in a way that cannot work (not a folder, an output folder that is not a site)."""


@dataclass
class CatalogueResult:
    site: Path
    index: Path
    builds: int
    deployments: int
    read: list[Path] = field(default_factory=list)  # factsheets parsed in this run (new, changed, or needed)
    reused: int = 0  # builds taken from the manifest without reading their factsheet
    diffs_computed: int = 0
    signatures: dict[str, int] = field(default_factory=dict)  # status → builds


@dataclass
class _Found:
    path: Path
    sha256: str
    entry: Entry | None = None  # reused from the manifest, or made in this run
    sheet: Factsheet | None = None


def build_catalogue(folders: list[Path], site: Path, pubkeys: list[Path] | None = None) -> CatalogueResult:
    site = Path(site)
    _check_inputs(folders, site)
    keys = load_keys(pubkeys or [])
    previous = read_manifest(site) or Manifest()
    found = _discover(folders, site)
    read: list[Path] = []
    reused = 0
    key_ids = sorted(k.key_id for k in keys)
    for f in found:
        old = previous.entries.get(f.sha256)
        if old is not None and old.keys == key_ids and _inputs_unchanged(old, f.path.parent):
            f.entry = old.model_copy(update={"source": str(f.path)})
            reused += 1
        else:
            f.sheet = _read(f, read)
            f.entry = _entry(f, keys, key_ids)
    diffs, computed = _diffs(found, previous, read, site)
    manifest = Manifest(entries={f.sha256: f.entry for f in found}, diffs=diffs)
    # Nothing was written so far; from here on, only writing.
    from factsheet.catalogue.pages import write_pages

    for f in found:
        if f.sha256 not in previous.entries or not (site / f.entry.folder).is_dir():
            _copy(f, site)
    _write_diffs(computed, site)
    _remove_stale(site, manifest)
    # Pages and manifest as one group (a stop signal waits for it): the site's pages always match its
    # manifest. Copies and diff reports before it are keyed by digest, so an interrupted run only redoes them.
    with together():
        index = write_pages(site, manifest)
        write_manifest(site, manifest)
    statuses: dict[str, int] = {}
    for e in manifest.entries.values():
        statuses[e.signature.status] = statuses.get(e.signature.status, 0) + 1
    return CatalogueResult(
        site=site,
        index=index,
        builds=len(manifest.entries),
        deployments=len({e.row.deployment for e in manifest.entries.values()}),
        read=read,
        reused=reused,
        diffs_computed=len(computed),
        signatures=statuses,
    )


def _check_inputs(folders: list[Path], site: Path) -> None:
    from factsheet.store import check_output

    if not folders:
        raise CatalogueError("give at least one folder to look for factsheets in")
    for d in folders:
        if not Path(d).is_dir():
            raise CatalogueError(f"{d}: not a folder (give folders that hold factsheets)")
    if site.exists() and not site.is_dir():
        raise CatalogueError(f"output folder {site}: exists and is not a folder")
    check_output(site)
    if site.is_dir() and any(site.iterdir()) and not (site / "manifest.json").is_file():
        raise CatalogueError(
            f"output folder {site}: not empty and not a catalogue (no manifest.json); give a new folder"
        )


def _discover(folders: list[Path], site: Path) -> list[_Found]:
    """Every factsheet.json under the folders (symbolic links are not followed: a factsheet's folder must
    not lead the catalogue to files elsewhere), the site itself skipped; one entry per distinct content."""
    site_real = site.resolve()
    by_sha: dict[str, _Found] = {}
    for root in folders:
        for here, dirs, files in os.walk(root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if Path(here, d).resolve() != site_real)
            path = Path(here) / FACTSHEET_JSON
            if FACTSHEET_JSON in files and path.is_file() and not path.is_symlink():
                sha = _sha256(path)
                by_sha.setdefault(sha, _Found(path, sha))
    return list(by_sha.values())


def _sha256(path: Path) -> str:
    try:
        return bare(sha256_file(path))
    except OSError as exc:
        raise CatalogueError(f"{path}: cannot read: {exc.strerror}") from exc


def _read(f: _Found, read: list[Path]) -> Factsheet:
    from factsheet.validate import load_factsheet

    read.append(f.path)
    return load_factsheet(f.path)


def _inputs(sheet: Factsheet, folder: Path) -> dict[str, str]:
    names = [n for n in DOCUMENTS if _plain_file(folder / n)]
    names += [
        rec.path
        for _, rec in sheet.records_files()
        if _inside(rec.path, folder) and _plain_file(folder / rec.path)
    ]
    return {n: _sha256(folder / n) for n in names}


def _inside(name: str, folder: Path) -> bool:
    """A records path the factsheet names must stay in its folder: nothing elsewhere on disk is read."""
    p = PurePosixPath(name)
    return (
        bool(name)
        and not p.is_absolute()
        and ".." not in p.parts
        and (folder / name).resolve().is_relative_to(folder.resolve())
    )


def _plain_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _inputs_unchanged(entry: Entry, folder: Path) -> bool:
    present = {n for n in DOCUMENTS if _plain_file(folder / n)}
    if not present <= set(entry.inputs):  # a document added since (e.g. a signature, a compliance report)
        return False
    return all(_plain_file(folder / n) and _sha256(folder / n) == sha for n, sha in entry.inputs.items())


def _entry(f: _Found, keys: list[TrustedKey], key_ids: list[str]) -> Entry:
    folder = f.path.parent
    return Entry(
        row=build_row(f.sheet, f.sha256, _report_verdict(folder)),
        signature=signature_of(f.path, keys),
        source=str(f.path),
        inputs=_inputs(f.sheet, folder),
        keys=key_ids,
        copied=[
            n
            for n in DOCUMENTS
            if _plain_file(folder / n) and (folder / n).stat().st_size <= MAX_DOCUMENT_BYTES
        ],
    )


def _report_verdict(folder: Path) -> str | None:
    """The verdict of a compliance report beside the factsheet (`factsheet check` after the build)."""
    from pydantic import ValidationError

    from factsheet.compliance.report import ComplianceReport

    path = folder / COMPLIANCE_JSON
    if not _plain_file(path):
        return None
    try:
        return ComplianceReport.model_validate_json(path.read_bytes()).verdict
    except (OSError, ValidationError):
        return "unreadable compliance report"


def _diffs(
    found: list[_Found], previous: Manifest, read: list[Path], site: Path
) -> tuple[dict[str, DiffEntry], list]:
    """`factsheet diff` between consecutive builds of each deployment (oldest first); a pair diffed before
    is reused, a new pair reads both factsheets (the older one too: diff needs its raw records)."""
    from factsheet.compliance.diff import compare

    groups: dict[str, list[_Found]] = {}
    for f in found:
        groups.setdefault(f.entry.row.deployment, []).append(f)
    out: dict[str, DiffEntry] = {}
    computed = []
    for builds in groups.values():
        builds.sort(key=lambda f: (f.entry.row.date, f.sha256))
        for old, new in zip(builds, builds[1:], strict=False):
            key = DiffEntry.key(old.sha256, new.sha256)
            done = previous.diffs.get(key)
            if done is not None and (done.folder is None or (site / done.folder / DIFF_HTML).is_file()):
                out[key] = done
                continue
            for f in (old, new):
                if f.sheet is None:
                    f.sheet = _read(f, read)
            try:
                report = compare(old.sheet, old.path, new.sheet, new.path, {})
            except (InputError, CheckFailed) as exc:
                out[key] = DiffEntry(
                    old=old.sha256, new=new.sha256, folder=None, verdict="not_compared", reason=str(exc)
                )
                continue
            out[key] = DiffEntry(
                old=old.sha256,
                new=new.sha256,
                folder=f"diffs/{key}",
                verdict=report.verdict,
                beyond_noise=[f"{x.figure}@{x.scope}" for x in report.figures if x.beyond_noise],
                regressions=[f"{x.figure}@{x.scope}" for x in report.figures if x.regression],
            )
            computed.append((out[key], report))
    return out, computed


def _copy(f: _Found, site: Path) -> None:
    folder = f.path.parent
    for name in f.entry.copied:
        write_atomic(site / f.entry.folder / name, (folder / name).read_bytes())


def _write_diffs(computed: list, site: Path) -> None:
    from factsheet.compliance.diff import write_diff

    for entry, report in computed:
        write_diff(report, site / entry.folder)


def _remove_stale(site: Path, manifest: Manifest) -> None:
    """Builds and diffs no longer found under the folders leave the site (only folders it named itself)."""
    keep = {e.folder for e in manifest.entries.values()} | {
        d.folder for d in manifest.diffs.values() if d.folder
    }
    for sub in ("builds", "diffs"):
        base = site / sub
        if base.is_dir():
            for child in base.iterdir():
                if child.is_dir() and not child.is_symlink() and f"{sub}/{child.name}" not in keep:
                    shutil.rmtree(child)


__all__ = ["DIFF_FIGURE", "FIGURE_KEYS", "CatalogueError", "CatalogueResult", "build_catalogue"]
