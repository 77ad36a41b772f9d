"""`factsheet catalogue DIR… -o SITE`: find every factsheet under the folders, re-derive each one, diff
consecutive builds of each deployment, and write the static site (see pages.py for what it shows).

Every factsheet is hostile input and the site is output, never input:

- each build is read within the size limit, re-derived from its raw records (what `factsheet validate`
  checks: digests, every figure, the compliance summary re-run) and one that does not re-derive is marked as
  such on every page that lists it;
- its pages are rendered here from the validated JSON (the renderer `factsheet render` uses); the author's
  own HTML, PDF and compliance pages are never copied or linked;
- nothing is read back from the site: the manifest is a record of this run. A site restored from a cache,
  a branch or an archive can hold anything, so every row, signature status and diff is made afresh, a
  symlink inside the site is removed (the link, never what it points to) before anything is written
  through it, and only folders named the way this module names them are ever deleted.

Everything is read and decided before the first byte is written: bad input (a path that is not a folder, a
malformed factsheet, a bad key) leaves the site as it was."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from factsheet.catalogue.folders import own_folder, remove
from factsheet.catalogue.manifest import (
    MANIFEST_NAME,
    DiffEntry,
    Entry,
    Manifest,
    build_folder,
    write_manifest,
)
from factsheet.catalogue.pages import unsupported_banner, write_pages
from factsheet.catalogue.rows import DIFF_FIGURE, FIGURE_KEYS, build_row
from factsheet.catalogue.signature import Signature, TrustedKey, load_keys, signature_of
from factsheet.compliance.diff import DiffReport, compare, write_diff
from factsheet.compliance.recheck import recheck
from factsheet.compliance.render import render_html as render_compliance_html
from factsheet.compliance.report import ComplianceReport
from factsheet.compliance.support import Support, listing, support
from factsheet.document.files import (
    ATTESTATION,
    COMPLIANCE_HTML,
    COMPLIANCE_JSON,
    FACTSHEET_HTML,
    FACTSHEET_JSON,
)
from factsheet.document.schema import Factsheet
from factsheet.rederive.validate import parse_factsheet
from factsheet.render import Integrity, render_html
from factsheet.untrusted.limits import (
    MAX_ATTESTATION_BYTES,
    MAX_COMPLIANCE_REPORT_BYTES,
    MAX_DIFFS_PER_DEPLOYMENT,
    MAX_FACTSHEET_BYTES,
)
from factsheet.untrusted.parsing import parse_json
from factsheet.untrusted.reading import read_confined, read_given
from probes.core.digests import bare, sha256_bytes
from probes.core.errors import CheckFailed, InputError
from probes.core.files import check_output, together, write_atomic

# Folders of the site this module names, and the only names it ever deletes in them (full digests; the
# 16-hex-digit names of catalogue version 1 are still cleared away).
_BUILD_NAME = re.compile(r"[0-9a-f]{64}|[0-9a-f]{16}")
_DIFF_NAME = re.compile(r"[0-9a-f]{64}-[0-9a-f]{64}|[0-9a-f]{16}-[0-9a-f]{16}")
_OWN_FOLDERS = {"builds": _BUILD_NAME, "diffs": _DIFF_NAME}


class CatalogueError(InputError):
    """A catalogue asked for in a way that cannot work (not a folder, an output folder that is not a site)."""


@dataclass
class CatalogueResult:
    site: Path
    index: Path
    builds: int
    deployments: int
    read: list[Path] = field(default_factory=list)  # factsheets read and re-derived in this run (all of them)
    reused: int = 0  # always 0: nothing is taken from an earlier run's site (kept for the API's callers)
    diffs_computed: int = 0
    signatures: dict[str, int] = field(default_factory=dict)  # status → builds
    unsupported: int = 0  # builds whose figures do not re-derive from their raw records


@dataclass
class _Build:
    path: Path
    sha256: str
    entry: Entry
    support: Support | None  # what its records support (None: could not be re-derived at all)


def build_catalogue(
    folders: list[Path],
    site: Path,
    pubkeys: list[Path] | None = None,
    progress: Callable[[str], None] | None = None,
) -> CatalogueResult:
    site = Path(site)
    say = progress or (lambda _: None)
    _check_inputs(folders, site)
    keys = load_keys(pubkeys or [])
    key_ids = sorted(k.key_id for k in keys)
    found = _discover(folders, site)
    builds: list[_Build] = []
    seen: set[str] = set()
    for i, (path, source) in enumerate(found, 1):
        raw = _read_sheet(path)
        sha = bare(sha256_bytes(raw))
        if sha in seen:  # one entry per distinct content
            continue
        seen.add(sha)
        sheet = parse_factsheet(raw, path)
        found_support, unsupported = _rederived(sheet, path)
        entry = _entry(sheet, path, source, sha, keys, key_ids, unsupported)
        builds.append(_Build(path, sha, entry, found_support))
        if i % 50 == 0:
            say(f"read and re-derived {i} of {len(found)} factsheets")
    groups: dict[str, list[_Build]] = {}
    for b in builds:
        groups.setdefault(b.entry.row.deployment_id, []).append(b)
    for group in groups.values():
        group.sort(key=lambda b: (b.entry.row.date, b.sha256))
    diffs, reports = _diffs(list(groups.values()), say)
    manifest = Manifest(entries={b.sha256: b.entry for b in builds}, diffs=diffs)
    # Nothing was written so far; from here on, only writing.

    site.mkdir(parents=True, exist_ok=True)
    for b in builds:
        _write_build(b, site)
    for key, report in reports.items():
        write_diff(report, own_folder(site, diffs[key].folder))
    _remove_stale(site, manifest)
    # Pages and manifest as one group (a stop signal waits for it): the site's pages always match its
    # manifest. Build folders and diff reports before it are keyed by digest, so an interrupted run only
    # redoes them.
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
        deployments=len(groups),
        read=[b.path for b in builds],
        diffs_computed=len(reports),
        signatures=statuses,
        unsupported=sum(not e.row.rederives for e in manifest.entries.values()),
    )


def _check_inputs(folders: list[Path], site: Path) -> None:

    if not folders:
        raise CatalogueError("give at least one folder to look for factsheets in")
    for d in folders:
        if not Path(d).is_dir():
            raise CatalogueError(f"{d}: not a folder (give folders that hold factsheets)")
    if site.exists() and not site.is_dir():
        raise CatalogueError(f"output folder {site}: exists and is not a folder")
    check_output(site)
    manifest = site / MANIFEST_NAME
    if site.is_dir() and any(site.iterdir()) and not (manifest.is_file() and not manifest.is_symlink()):
        raise CatalogueError(
            f"output folder {site}: not empty and not a catalogue (no manifest.json); give a new folder"
        )


def _discover(folders: list[Path], site: Path) -> list[tuple[Path, str]]:
    """Every factsheet.json under the folders (symbolic links are not followed: a factsheet's folder must
    not lead the catalogue to files elsewhere), the site itself skipped; with the name it is shown by (the
    given folder's name and the path inside it: no machine path reaches the site)."""
    site_real = site.resolve()
    out = []
    for root in folders:
        for here, dirs, files in os.walk(root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if Path(here, d).resolve() != site_real)
            path = Path(here) / FACTSHEET_JSON
            if FACTSHEET_JSON in files and path.is_file() and not path.is_symlink():
                inside = path.relative_to(root).as_posix()
                out.append((path, f"{Path(root).resolve().name}/{inside}"))
    return out


def _read_sheet(path: Path) -> bytes:
    """The factsheet's bytes within the size limit (refused before a byte is read otherwise): hashed and
    parsed from this one read."""
    try:
        return read_given(path, MAX_FACTSHEET_BYTES, "factsheet")
    except OSError as exc:
        raise CatalogueError(f"{path}: cannot read: {exc.strerror}") from exc


def _entry(
    sheet: Factsheet,
    path: Path,
    source: str,
    sha: str,
    keys: list[TrustedKey],
    key_ids: list[str],
    unsupported: str | None,
) -> Entry:
    folder = path.parent
    report = _report(folder, sha)
    signature = signature_of(path, keys)
    inputs = {FACTSHEET_JSON: sha}
    for name in (ATTESTATION, COMPLIANCE_JSON):
        data = _confined_bytes(folder, name, _LIMITS[name])
        if data is not None:
            inputs[name] = bare(sha256_bytes(data))
    inputs |= {rec.path: bare(rec.sha256) for _, rec in sheet.records_files() if unsupported is None}
    documents = [FACTSHEET_JSON, FACTSHEET_HTML]
    if ATTESTATION in inputs:
        documents.append(ATTESTATION)
    if isinstance(report, ComplianceReport):
        documents += [COMPLIANCE_JSON, COMPLIANCE_HTML]
    verdict = report.verdict if isinstance(report, ComplianceReport) else report
    return Entry(
        row=build_row(sheet, sha, verdict, unsupported),
        signature=signature,
        source=source,
        inputs=inputs,
        keys=key_ids,
        documents=documents,
    )


_LIMITS = {ATTESTATION: MAX_ATTESTATION_BYTES, COMPLIANCE_JSON: MAX_COMPLIANCE_REPORT_BYTES}


def _rederived(sheet: Factsheet, path: Path) -> tuple[Support | None, str | None]:
    """What the records support, and None when every figure re-derives from the raw records, every records
    file matches its digest and the compliance summary holds re-run; else why not, in words (the first few
    discrepancies)."""
    found = None
    try:
        found = support(sheet, path.parent)
        if found.problems:
            return found, f"not supported by its records: {listing(found.problems)}"
        differs = recheck(sheet, path)
    except (InputError, CheckFailed) as exc:  # a records path leading out of the folder, a FIFO: refused
        return found, f"cannot be re-derived: {exc}"
    if differs:
        shown = "; ".join(d.describe() for d in differs[:3])
        return found, f"its compliance summary does not hold re-run: {shown}"
    return found, None


def _confined_bytes(folder: Path, name: str, limit: int) -> bytes | None:
    """A file beside the factsheet, confined to its folder (no symlink), within its limit; None otherwise."""
    try:
        return read_confined(folder, name, limit, name, no_symlinks=True)
    except (OSError, InputError):
        return None


def _report(folder: Path, sha: str) -> ComplianceReport | str | None:
    """The compliance report beside the factsheet (`factsheet check` after the build), or why it is not
    shown; None when there is none."""
    if not (folder / COMPLIANCE_JSON).exists() and not (folder / COMPLIANCE_JSON).is_symlink():
        return None
    data = _confined_bytes(folder, COMPLIANCE_JSON, MAX_COMPLIANCE_REPORT_BYTES)
    if data is None:
        return "unreadable compliance report"
    try:
        report = ComplianceReport.model_validate(parse_json(data, COMPLIANCE_JSON))
    except (InputError, ValidationError):
        return "unreadable compliance report"
    if bare(report.factsheet.sha256) != sha:
        return "compliance report of another factsheet"
    return report


def _diffs(
    groups: list[list[_Build]], say: Callable[[str], None]
) -> tuple[dict[str, DiffEntry], dict[str, DiffReport]]:
    """`factsheet diff` between consecutive builds of each deployment (oldest first): the newest
    MAX_DIFFS_PER_DEPLOYMENT pairs of each (a diff re-derives both builds and resamples their records: a
    fraction of a second each), older pairs listed as not compared, saying why."""
    out: dict[str, DiffEntry] = {}
    reports: dict[str, DiffReport] = {}
    for builds in groups:
        pairs = list(zip(builds, builds[1:], strict=False))
        skipped = len(pairs) - MAX_DIFFS_PER_DEPLOYMENT
        for n, (old, new) in enumerate(pairs):
            key = DiffEntry.key(old.sha256, new.sha256)
            if n < skipped:
                out[key] = _not_compared(
                    old, new, f"only the newest {MAX_DIFFS_PER_DEPLOYMENT} pairs of a deployment are diffed"
                )
                continue
            try:
                sheets = [parse_factsheet(_read_sheet(b.path), b.path) for b in (old, new)]
                known = (old.support, new.support) if old.support and new.support else None
                report = compare(sheets[0], old.path, sheets[1], new.path, {}, known)
            except (InputError, CheckFailed) as exc:
                out[key] = _not_compared(old, new, str(exc))
                continue
            if bare(report.old_sha256) != old.sha256 or bare(report.new_sha256) != new.sha256:
                out[key] = _not_compared(old, new, "a factsheet changed while the catalogue ran")
                continue
            # the report names the builds as the site does, never by a path on this machine
            reports[key] = report.model_copy(update={"old": old.entry.source, "new": new.entry.source})
            verdict, why = report.verdict, report.verdict_reason
            if verdict == "no_regression" and not old.entry.row.rederives:
                # diff judges the candidate's support; a pair whose older build is forged is no evidence of
                # "no regression" either (its rows rest on figures the records do not give)
                verdict = "unsupported"
                why = f"the older build does not re-derive; diff's verdict on what stayed comparable: {why}"
            out[key] = DiffEntry(
                old=old.sha256,
                new=new.sha256,
                folder=f"diffs/{key}",
                verdict=verdict,
                verdict_reason=why,
                beyond_noise=[f"{x.figure}@{x.scope}" for x in report.figures if x.beyond_noise],
                regressions=[f"{x.figure}@{x.scope}" for x in report.figures if x.regression],
            )
            if len(reports) % 10 == 0:
                say(f"diffed {len(reports)} pairs of builds")
    return out, reports


def _not_compared(old: _Build, new: _Build, reason: str) -> DiffEntry:
    return DiffEntry(old=old.sha256, new=new.sha256, folder=None, verdict="not_compared", reason=reason)


def _write_build(b: _Build, site: Path) -> None:
    """The build's folder: the factsheet JSON as read (its digest is the folder's name), its page rendered
    from it, its attestation and compliance report as read and the report's page rendered from it; any other
    file in the folder (an author's page from an older catalogue, something planted) removed."""
    raw = _read_sheet(b.path)
    if bare(sha256_bytes(raw)) != b.sha256:
        raise CatalogueError(f"{b.entry.source}: changed while the catalogue ran; run it again")
    sheet = parse_factsheet(raw, b.path)
    folder = own_folder(site, b.entry.folder)
    files: dict[str, bytes] = {FACTSHEET_JSON: raw, FACTSHEET_HTML: _page(sheet, b).encode()}
    source = b.path.parent
    for name in (ATTESTATION, COMPLIANCE_JSON):
        if name in b.entry.documents:
            data = _confined_bytes(source, name, _LIMITS[name])
            if data is None or bare(sha256_bytes(data)) != b.entry.inputs.get(name):
                raise CatalogueError(
                    f"{b.entry.source}: {name} changed while the catalogue ran; run it again"
                )
            files[name] = data
    if COMPLIANCE_HTML in b.entry.documents:
        report = ComplianceReport.model_validate(parse_json(files[COMPLIANCE_JSON], COMPLIANCE_JSON))
        files[COMPLIANCE_HTML] = render_compliance_html(report, FACTSHEET_HTML).encode()
    for name, data in files.items():
        write_atomic(folder / name, data)
    for child in folder.iterdir():
        if child.name not in files and not child.name.startswith("."):
            remove(child)


def _page(sheet: Factsheet, b: _Build) -> str:
    """The factsheet's page as `factsheet render` makes it, with a banner when it does not re-derive."""

    signed = b.entry.signature.key_id if b.entry.signature.status == "verified" else None
    html = render_html(sheet, Integrity(f"sha256:{b.sha256}", signed))
    if b.entry.row.rederives:
        return html
    return html.replace("<body>", f"<body>{unsupported_banner(b.entry.row.unsupported or '')}", 1)


def _remove_stale(site: Path, manifest: Manifest) -> None:
    """Builds and diffs no longer found under the folders leave the site: only folders named the way this
    module names them, inside real folders of the site (a `diffs` that is a link is removed as a link)."""
    keep = {e.folder for e in manifest.entries.values()} | {
        d.folder for d in manifest.diffs.values() if d.folder
    }
    for sub, named in _OWN_FOLDERS.items():
        base = site / sub
        if base.is_symlink():
            base.unlink()
            continue
        if not base.is_dir():
            continue
        for child in base.iterdir():
            if f"{sub}/{child.name}" in keep and not child.is_symlink():
                continue
            if child.is_symlink() or named.fullmatch(child.name):
                remove(child)


__all__ = [
    "DIFF_FIGURE",
    "FIGURE_KEYS",
    "CatalogueError",
    "CatalogueResult",
    "Signature",
    "build_catalogue",
    "build_folder",
]
