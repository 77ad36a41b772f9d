"""The catalogue under hostile input (issue 30, issue 28): a build that does not re-derive is shown and marked,
never a crash and never "no regression"; the author's own pages never reach the site; the site is output,
never input (an edited manifest, a symlinked folder); nothing is read outside a factsheet's folder; files
are sized before they are read; a deployment's identity is unambiguous. Each case failed before the fix."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.catalogue.site import build_catalogue
from factsheet.cli.commands import app

# One worker: the folder's signed builds (conftest `builds`) made once (tests/conftest.py).
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("catalogue-builds")]

runner = CliRunner()
PLANTED = "<script>fetch('http://127.0.0.1:9/planted')</script>"


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _edit(folder: Path, change) -> None:
    sheet = json.loads((folder / "factsheet.json").read_text())
    change(sheet)
    (folder / "factsheet.json").write_text(json.dumps(sheet, indent=2))
    (folder / "factsheet.intoto.jsonl").unlink(missing_ok=True)


def _sha(folder: Path) -> str:
    return hashlib.sha256((folder / "factsheet.json").read_bytes()).hexdigest()


def _site_bytes(site: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file() and not p.is_symlink())


def test_a_build_that_does_not_rederive_is_marked_and_the_authors_pages_never_served(tmp_path, builds):
    """A forged goodput (99): diff answers `unsupported`, which the manifest could not hold (exit 3, nothing
    written); now the build is listed with its mark on every page and the pair is never 'no regression'.
    The author's HTML (a planted script) is not copied or linked: the site's page is rendered from the JSON."""
    root = tmp_path / "in"
    _copy(builds[0].folder, root / "1")
    forged = _copy(builds[1].folder, root / "2")
    _copy(builds[2].folder, root / "3")  # after the forged one: a pair whose older build is forged
    _edit(forged, lambda s: s["load"]["points"][0]["result"]["metrics"].update(goodput=99.0))
    for name in ("factsheet.html", "compliance.html"):
        (forged / name).write_text(f"<html><body>{PLANTED}</body></html>")
    site = tmp_path / "site"
    result = runner.invoke(app, ["catalogue", str(root), "-o", str(site)])
    assert result.exit_code == 0, result.output
    assert "1 do not re-derive" in result.output
    index = (site / "index.html").read_text()
    row = index[index.index(f'data-sha256="{_sha(forged)}"') :].split("</tr>")[0]
    assert 'class="unsupported"' in row and 'data-value="no"' in row and "(does not re-derive)" in row
    assert "goodput" in row  # the reason names the figure its records do not give
    (page,) = (site / "deployments").glob("*.html")
    html = page.read_text()
    assert 'data-verdict="unsupported"' in html and 'data-verdict="no_regression"' not in html
    for pair in ("1-2", "2-3"):  # whatever diff's verdict, the pair says which build does not re-derive
        item = html[html.index(f'data-pair="{pair}"') :].split("</li>")[0]
        assert "build 2 does not re-derive" in item, item
    # Nothing of the author's pages anywhere in the site; the build's page is the catalogue's, marked.
    assert b"planted" not in _site_bytes(site)
    own = (site / "builds" / _sha(forged) / "factsheet.html").read_text()
    assert (
        "do not re-derive from its raw records" in own
        and not (site / "builds" / _sha(forged) / "factsheet.pdf").exists()
    )


def test_an_edited_manifest_is_not_input(tmp_path, builds):
    """A site restored from somewhere others can write: an entry whose input hashes match was reused unread
    (a goodput of 12,345, an unsigned build 'verified', a file outside the sources copied into the site)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the site")
    root = tmp_path / "sources" / "in"
    folder = _copy(builds[1].folder, root / "2")
    site = tmp_path / "site"
    build_catalogue([root], site)
    manifest = json.loads((site / "manifest.json").read_text())
    (entry,) = manifest["entries"].values()
    entry["row"]["figures"]["goodput"]["value"] = 12345.0
    entry["signature"] = {"status": "verified", "key_id": "forged", "detail": "signed"}
    entry["inputs"]["../../../secret.txt"] = hashlib.sha256(secret.read_bytes()).hexdigest()
    for key in ("copied", "documents"):  # the list of files copied into the site, by either name
        if key in entry:
            entry[key].append("../../../secret.txt")
    (site / "manifest.json").write_text(json.dumps(manifest))
    again = build_catalogue([root], site)
    assert again.signatures == {"unsigned": 1} and again.read == [folder / "factsheet.json"]
    index = (site / "index.html").read_text()
    assert "12345" not in index and "12,345" not in index and "forged" not in index
    assert b"not for the site" not in _site_bytes(site)
    assert not (tmp_path / "site" / "builds" / "secret.txt").exists()


def test_links_inside_the_site_are_never_followed(tmp_path, builds):
    """`SITE/diffs` a link to a folder of someone's: its subfolders were deleted by `_remove_stale`; a build's
    folder a link to elsewhere: written through. Now the links are removed (never their targets)."""
    root = tmp_path / "in"
    first, second = _copy(builds[0].folder, root / "1"), _copy(builds[1].folder, root / "2")
    site = tmp_path / "site"
    build_catalogue([root], site)
    theirs = tmp_path / "theirs"
    for name in ("0" * 16 + "-" + "1" * 16, "notes", "a" * 64 + "-" + "b" * 64):
        (theirs / name).mkdir(parents=True)
        (theirs / name / "keep.txt").write_text("theirs")
    shutil.rmtree(site / "diffs")
    (site / "diffs").symlink_to(theirs, target_is_directory=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(site / "builds" / _sha(second))
    (site / "builds" / _sha(second)).symlink_to(elsewhere, target_is_directory=True)
    (site / "deployments" / "planted.html").symlink_to(tmp_path / "theirs" / "notes" / "keep.txt")
    result = build_catalogue([root], site)
    assert sorted(p.name for p in theirs.iterdir()) == sorted(
        ["0" * 16 + "-" + "1" * 16, "notes", "a" * 64 + "-" + "b" * 64]
    )
    assert all((p / "keep.txt").read_text() == "theirs" for p in theirs.iterdir())
    assert list(elsewhere.iterdir()) == []
    for link in (site / "diffs", site / "builds" / _sha(second)):
        assert link.is_dir() and not link.is_symlink()
    assert (site / "diffs" / f"{_sha(first)}-{_sha(second)}" / "diff.html").is_file()
    assert not (site / "deployments" / "planted.html").exists() and result.builds == 2


def test_a_symlinked_attestation_is_not_followed(tmp_path, builds, keys):
    """`factsheet.intoto.jsonl` a link out of the factsheet's folder: it was opened and read, and the page
    told whether the target exists and parses. Now it is refused unread: a link to an existing file and a
    dangling one read the same."""
    outside = tmp_path / "shadow"
    outside.write_text("root:*:19000:0:99999:7:::\n")
    root = tmp_path / "in"
    details = []
    for name, target in (("existing", outside), ("dangling", tmp_path / "absent")):
        folder = _copy(builds[1].folder, root / name)
        _edit(folder, lambda s, n=name: s.update(name=f"linked-{n}"))
        (folder / "factsheet.intoto.jsonl").symlink_to(target)
    result = build_catalogue([root], tmp_path / "site", [keys[1]])
    manifest = json.loads((tmp_path / "site" / "manifest.json").read_text())
    for entry in manifest["entries"].values():
        assert entry["signature"]["status"] == "signature failed"
        details.append(entry["signature"]["detail"])
    assert len(set(details)) == 1 and "symlink" in details[0] and str(tmp_path) not in details[0]
    assert result.signatures == {"signature failed": 2}
    assert b"root:*" not in _site_bytes(tmp_path / "site")


def test_files_are_sized_before_they_are_read(tmp_path, builds):
    """A compliance report over its limit was read whole (a 4 GB sparse one: MemoryError, exit 3) and every
    document was hashed first (a 20 GB sparse PDF: 102 s). Now the report is refused by its size and the
    author's PDF is never opened."""
    folder = _copy(builds[0].folder, tmp_path / "in" / "1")
    report = (folder / "compliance.json").read_bytes()
    (folder / "compliance.json").write_bytes(report + b" " * (8 * 2**20 + 1 - len(report)))  # valid, too big
    with open(folder / "factsheet.pdf", "r+b") as pdf:
        pdf.truncate(1 << 30)  # sparse: nothing on disk
    build_catalogue([tmp_path / "in"], tmp_path / "site")
    (entry,) = json.loads((tmp_path / "site" / "manifest.json").read_text())["entries"].values()
    # the factsheet's gate names that report: its verdict cannot be re-checked, and the row says so
    assert not entry["row"]["rederives"] and "over the limit" in entry["row"]["unsupported"]
    assert "compliance.json" not in entry["inputs"] and "factsheet.pdf" not in entry["inputs"]
    assert "compliance.json" not in entry["documents"] and "factsheet.pdf" not in entry["documents"]


def test_deployment_identity_is_unambiguous(tmp_path, builds):
    """Name "a · b" with model "c" and name "a" with model "b · c" were one deployment (one trend, one
    page); a page was named by a 60-character slug and a 32-bit hash. Now each has its own page, named by
    the full sha256 of [name, model, target kind]."""
    root = tmp_path / "in"
    pairs = (("a · b", "c"), ("a", "b · c"), ("\u202ebuild 1", "m"))  # and a bidi override in a name
    for i, (name, model) in enumerate(pairs):
        folder = _copy(builds[1].folder, root / str(i))
        _edit(folder, lambda s, n=name, m=model: (s.update(name=n), s["identity"].update(name=m)))
    result = build_catalogue([root], tmp_path / "site")
    assert result.deployments == 3
    index = (tmp_path / "site" / "index.html").read_text()
    assert "\u202e" not in index and "&lt;U+202E&gt;build 1" in index  # shown, never sent (the pages' rule)
    pages = sorted(p.name for p in (tmp_path / "site" / "deployments").glob("*.html"))
    want = sorted(
        hashlib.sha256(json.dumps([n, m, "endpoint"], separators=(",", ":")).encode()).hexdigest() + ".html"
        for n, m in pairs
    )
    assert pages == want


def test_diffs_per_deployment_are_bounded(tmp_path, builds, monkeypatch):
    """500 builds of one deployment took > 115 s (every pair diffed, every factsheet held): the newest
    pairs are diffed, older ones listed as not compared, saying why."""
    import factsheet.catalogue.site as site_module

    monkeypatch.setattr(site_module, "MAX_DIFFS_PER_DEPLOYMENT", 1)
    root = tmp_path / "in"
    for i, b in enumerate(builds):
        _copy(b.folder, root / str(i))
    result = build_catalogue([root], tmp_path / "site")
    diffs = json.loads((tmp_path / "site" / "manifest.json").read_text())["diffs"]
    assert result.diffs_computed == 1 and len(diffs) == 2
    old = next(d for d in diffs.values() if d["folder"] is None)
    assert old["verdict"] == "not_compared" and "newest 1 pairs" in old["reason"]
    assert old["old"] == _sha(builds[0].folder)
    assert os.listdir(tmp_path / "site" / "diffs") == [f"{_sha(builds[1].folder)}-{_sha(builds[2].folder)}"]
