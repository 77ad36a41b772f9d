"""Issue 20, item 3 (Confined reading): a file a factsheet or policy names is read only inside its folder.

Raw records, signed subjects and a policy's `extends:` must resolve inside their folder (after symlinks)
and be regular files; anything else is refused with exit 2 and one line naming the path and the reason,
before it is opened, so the answer never reveals whether a file elsewhere exists. Before the fix, a
records path with `..`, an absolute path or a symlink out of the folder was read and hashed (a path
reaching an identical copy elsewhere gave "valid factsheet"), `sign` put such a file into the attestation,
and signed files replaced by symlinks to identical copies outside still "verified".
"""

# ruff: noqa: F811 (the fixtures imported from untrusted_builds are named as test parameters)
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.hostile.untrusted_builds import (
    assert_nothing_written,
    assert_refused,
    cli,
    records_path,
    set_records_path,
)

pytestmark = pytest.mark.system


@pytest.fixture
def outside(sheet, tmp_path) -> Path:
    """An identical copy of the first load point's records, outside the factsheet's folder."""
    copy = tmp_path / "elsewhere" / "load.jsonl"
    copy.parent.mkdir()
    shutil.copyfile(sheet / records_path(sheet), copy)
    return copy


def _validate(folder: Path):
    return cli("validate", folder / "factsheet.json")


def test_a_records_path_with_dotdot_to_an_identical_copy_is_refused(sheet, outside, tmp_path):
    set_records_path(sheet, "../elsewhere/load.jsonl")
    assert_refused(_validate(sheet), "../elsewhere/load.jsonl", "'..'")
    out = tmp_path / "out"
    ran = cli("check", sheet / "factsheet.json", "-p", "release-gate", "-o", out)
    assert_refused(ran, "'..'")
    assert_nothing_written(out)


def test_a_dotdot_inside_the_folder_is_refused_too(sheet):
    """`records/../records/x` stays inside, but a name with `..` is refused as written, whatever it
    resolves to: the rule is checkable without touching the disk."""
    name = records_path(sheet)
    set_records_path(sheet, f"records/../{name}")
    assert_refused(_validate(sheet), "'..'")


@pytest.mark.parametrize("exists", [True, False])
def test_an_absolute_records_path_is_refused_whether_or_not_it_exists(sheet, outside, exists):
    """The same answer for a file that exists and one that does not: no probing of the verifier's disk."""
    target = outside if exists else outside.with_name("absent.jsonl")
    set_records_path(sheet, str(target))
    assert_refused(_validate(sheet), str(target), "absolute path")


@pytest.mark.parametrize("exists", [True, False])
def test_a_symlink_in_records_pointing_out_of_the_folder_is_refused(sheet, outside, exists):
    name = records_path(sheet)
    (sheet / name).unlink()
    (sheet / name).symlink_to(outside if exists else outside.with_name("absent.jsonl"))
    assert_refused(_validate(sheet), name, "outside")


def test_a_symlinked_records_folder_pointing_out_is_refused(sheet, outside):
    """The link may be any component of the path, not only the last."""
    name = records_path(sheet)
    shutil.copytree(sheet / "records", outside.parent / "records")
    shutil.rmtree(sheet / "records")
    (sheet / "records").symlink_to(outside.parent / "records")
    assert_refused(_validate(sheet), name, "outside")


def test_a_nul_byte_in_a_records_path_is_refused(sheet):
    name = records_path(sheet)
    set_records_path(sheet, name + "\x00.txt")
    assert_refused(_validate(sheet), "control character")


def test_a_records_path_that_is_a_folder_is_refused(sheet):
    set_records_path(sheet, "records")
    assert_refused(_validate(sheet), "records", "a folder, not a regular file")


def test_a_records_file_that_is_a_fifo_is_refused_without_hanging(sheet):
    name = records_path(sheet)
    (sheet / name).unlink()
    os.mkfifo(sheet / name)
    assert_refused(cli("validate", sheet / "factsheet.json", timeout=60), name, "a FIFO")


def test_a_symlink_inside_the_folder_is_followed_for_validate(sheet):
    """Confinement is about where a file really is: a link that stays inside the folder is read."""
    name = records_path(sheet)
    real = sheet / "real.jsonl"  # beside records/, where a file no figure cites would be a discrepancy
    (sheet / name).rename(real)
    (sheet / name).symlink_to("../real.jsonl")
    ran = _validate(sheet)
    assert ran.returncode == 0, ran.stderr


# -- signing and verifying ------------------------------------------------------------------------------


def test_sign_never_attests_a_file_outside_the_folder(sheet, outside, keys):
    private, _ = keys
    set_records_path(sheet, "../elsewhere/load.jsonl")
    assert_refused(cli("sign", sheet / "factsheet.json", "--key", private), "'..'")
    assert not (sheet / "factsheet.intoto.jsonl").exists()


def test_sign_refuses_a_symlinked_subject_even_inside_the_folder(sheet, keys):
    """A signature covers files really in the folder: `verify` would refuse the link anyway."""
    private, _ = keys
    name = records_path(sheet)
    (sheet / name).rename(sheet / "real.jsonl")
    (sheet / name).symlink_to("../real.jsonl")
    assert_refused(cli("sign", sheet / "factsheet.json", "--key", private), name, "symlink")
    assert not (sheet / "factsheet.intoto.jsonl").exists()


@pytest.mark.parametrize("subject", ["factsheet.json", "factsheet.pdf", "records"])
def test_a_signed_file_replaced_by_a_symlink_to_an_identical_copy_does_not_verify(
    subject, sheet, keys, tmp_path
):
    private, public = keys
    assert cli("sign", sheet / "factsheet.json", "--key", private).returncode == 0
    name = records_path(sheet) if subject == "records" else subject
    copy = tmp_path / "copies" / Path(name).name
    copy.parent.mkdir()
    shutil.copyfile(sheet / name, copy)
    (sheet / name).unlink()
    (sheet / name).symlink_to(copy)
    ran = cli("verify", sheet / "factsheet.json", "--pubkey", public)
    assert_refused(ran, name, "symlink")
    assert "verified" not in ran.stdout


def test_a_missing_signed_file_is_still_a_failed_check(sheet, keys):
    """Absent is not hostile: a signed file deleted stays a failed check (exit 1) naming it."""
    private, public = keys
    assert cli("sign", sheet / "factsheet.json", "--key", private).returncode == 0
    (sheet / "factsheet.pdf").unlink()
    ran = cli("verify", sheet / "factsheet.json", "--pubkey", public)
    assert ran.returncode == 1 and "factsheet.pdf is missing" in ran.stderr, ran.stderr


# -- policies: extends resolves inside the policy's folder ----------------------------------------------

BASE = "id: base\ntitle: t\nversion: '1'\nrules:\n  - {id: r, title: t, field: 'load.points[0].result.metrics.completed', op: exists}\n"


def _policy(folder: Path, extends: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "top.yaml"
    path.write_text(f"id: top\ntitle: t\nversion: '1'\nextends: '{extends}'\n")
    return path


@pytest.mark.parametrize(
    ("extends", "reason"),
    [
        ("../base.yaml", "'..'"),
        ("ABS", "absolute path"),
        ("link.yaml", "outside"),
        ("base\x01.yaml", "control"),
    ],
)
def test_extends_outside_the_policy_folder_is_refused(extends, reason, sheet, tmp_path):
    (tmp_path / "base.yaml").write_text(BASE)
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "link.yaml").symlink_to(tmp_path / "base.yaml")
    extends = str(tmp_path / "base.yaml") if extends == "ABS" else extends
    policy = _policy(folder, extends.replace("\x01", "\\x01"))
    if "\x01" in extends:
        policy.write_text(policy.read_text().replace("'", '"'))  # a YAML escape: the name holds \x01
    out = tmp_path / "out"
    ran = cli("check", sheet / "factsheet.json", "-p", policy, "-o", out)
    assert_refused(ran, "policy extends", reason)
    assert_nothing_written(out)


def test_extends_a_file_beside_it_or_a_builtin_profile_still_works(sheet, tmp_path):
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "base.yaml").write_text(BASE)
    for extends in ("base.yaml", "release-gate"):
        ran = cli("check", sheet / "factsheet.json", "-p", _policy(folder, extends), "-o", tmp_path / extends)
        assert ran.returncode in (0, 1) and "error:" not in ran.stderr, ran.stderr
        assert (tmp_path / extends / "compliance.json").is_file()
