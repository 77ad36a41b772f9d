"""Issue 20, item 4 (Bounded): hostile shapes are refused before parsing, with exit 2 and one line naming
the cause, nothing written, within seconds and a memory cap (untrusted_builds.cli: its own process, a
timeout, 3 GiB of address space). Before the fix these crashed (RecursionError, OverflowError: exit 3),
hung (a FIFO), exhausted memory (/dev/zero) or ran for minutes (2,400 rules, 200 load points).

The limits themselves are factsheet/untrusted/limits.py (README "What `factsheet validate` guarantees").
"""

# ruff: noqa: F811 (the fixtures imported from untrusted_builds are named as test parameters)
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from factsheet.untrusted.limits import (
    MAX_LOAD_POINTS,
    MAX_NESTING_DEPTH,
    MAX_POLICY_BYTES,
    MAX_POLICY_RULES,
    MAX_RECORDS_FILE_BYTES,
)
from tests.hostile.untrusted_builds import (
    assert_nothing_written,
    assert_refused,
    cli,
    edit,
    restate_records,
)

pytestmark = pytest.mark.system

DEEP = b"[" * 100_000 + b"]" * 100_000


def _command(name: str, folder: Path, out: Path, other: Path) -> list:
    """The CLI arguments of `name` run on folder/factsheet.json, writing (if at all) into `out`."""
    f = folder / "factsheet.json"
    return {
        "validate": ["validate", f],
        "render": ["render", f, "-o", out],
        "check": ["check", f, "-p", "release-gate", "-o", out],
        "export": ["export", f, "-f", "hf", "-o", out],
        "diff": ["diff", other / "factsheet.json", f, "-o", out],
    }[name]


COMMANDS = ["validate", "render", "check", "export", "diff"]


@pytest.mark.parametrize("command", COMMANDS)
def test_nesting_100000_deep_is_refused_per_command(command, sheet, honest, tmp_path):
    (sheet / "factsheet.json").write_bytes(DEEP)
    out = tmp_path / "out"
    ran = cli(*_command(command, sheet, out, honest))
    assert_refused(ran, "factsheet.json", f"nested more than {MAX_NESTING_DEPTH} deep")
    assert_nothing_written(out)


def _figure_to(folder: Path, literal: str) -> None:
    """Set a stated figure (the first load point's output throughput) to `literal`, as raw JSON text."""
    edit(folder, lambda d: d["load"]["points"][0]["result"]["metrics"].update(output_throughput="@@X@@"))
    path = folder / "factsheet.json"
    path.write_text(path.read_text().replace('"@@X@@"', literal))


@pytest.mark.parametrize(
    ("command", "literal"),
    [(c, lit) for c in COMMANDS for lit in ("Infinity", "1e400")]
    + [("validate", "-Infinity"), ("validate", "NaN")],
)
def test_a_non_finite_figure_is_refused_per_command(command, literal, sheet, honest, tmp_path):
    """A figure is finite or not measured: `Infinity` crashed render, check and diff (OverflowError) and
    went into the model card as `.inf`; 1e400 is the same number spelled so that Python reads inf."""
    _figure_to(sheet, literal)
    out = tmp_path / "out"
    ran = cli(*_command(command, sheet, out, honest))
    assert_refused(ran, "factsheet.json", literal, "not a finite number")
    assert_nothing_written(out)


def test_a_5000_digit_integer_is_refused(sheet):
    _figure_to(sheet, "1" * 5000)
    assert_refused(cli("validate", sheet / "factsheet.json"), "5,000 digits")


def test_nesting_in_a_records_file_is_refused(sheet, tmp_path):
    """The records' digest restated: only the shape can refuse them, before a line is parsed."""
    line = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    name = restate_records(sheet, 0, line, records=1)
    assert_refused(cli("validate", sheet / "factsheet.json"), name, "nested more than")
    out = tmp_path / "out"
    ran = cli("check", sheet / "factsheet.json", "-p", "release-gate", "-o", out)
    assert_refused(ran, name, "nested more than")
    assert_nothing_written(out)


def test_nesting_in_the_attestation_envelope_is_refused(sheet, keys):
    private, public = keys
    assert cli("sign", sheet / "factsheet.json", "--key", private).returncode == 0
    (sheet / "factsheet.intoto.jsonl").write_bytes(DEEP + b"\n")
    ran = cli("verify", sheet / "factsheet.json", "--pubkey", public)
    assert_refused(ran, "factsheet.intoto.jsonl", "nested more than")


def test_nesting_in_a_policy_is_refused(sheet, tmp_path):
    policy = tmp_path / "deep.yaml"
    policy.write_text("id: deep\ntitle: t\nversion: '1'\nrules: " + "[" * 100_000 + "]" * 100_000 + "\n")
    out = tmp_path / "out"
    ran = cli("check", sheet / "factsheet.json", "-p", policy, "-o", out)
    assert_refused(ran, "deep.yaml", "nest")  # here libyaml's own flow-level limit may answer first
    assert_nothing_written(out)


def test_nesting_in_a_block_style_policy_is_refused(sheet, tmp_path):
    """Block style nests by indentation (libyaml's own limit, 1,000, is for flow style only)."""
    policy = tmp_path / "deep.yaml"
    policy.write_text("id: deep\ntitle: t\nversion: '1'\nrules:\n" + "- " * 5_000 + "x\n")
    ran = cli("check", sheet / "factsheet.json", "-p", policy, "-o", tmp_path / "out")
    assert_refused(ran, "deep.yaml", f"nested more than {MAX_NESTING_DEPTH} deep")


def _rules(n: int) -> str:
    return "".join(
        f"  - {{id: r{i}, title: rule {i}, field: 'load.points[0].result.metrics.completed', "
        f"op: '>=', threshold: 1}}\n"
        for i in range(n)
    )


def test_a_policy_over_the_size_limit_is_refused(sheet, tmp_path):
    """The issue's attack: a 0.5 MB policy of 2,400 rules took > 120 s and 2.2 GB."""
    policy = tmp_path / "big.yaml"
    padded = _rules(2_400).replace(
        "title: rule", "description: '" + "a rule of a big policy " * 5 + "', title: rule"
    )
    policy.write_text("id: big\ntitle: t\nversion: '1'\nrules:\n" + padded)
    assert policy.stat().st_size > 500_000
    out = tmp_path / "out"
    ran = cli("check", sheet / "factsheet.json", "-p", policy, "-o", out)
    assert_refused(ran, "big.yaml", "over the limit")
    assert ran.seconds < 60
    assert_nothing_written(out)


def test_a_policy_of_too_many_rules_is_refused(sheet, tmp_path):
    policy = tmp_path / "many.yaml"
    policy.write_text("id: many\ntitle: t\nversion: '1'\nrules:\n" + _rules(MAX_POLICY_RULES + 1))
    assert policy.stat().st_size < MAX_POLICY_BYTES
    ran = cli("check", sheet / "factsheet.json", "-p", policy, "-o", tmp_path / "out")
    assert_refused(ran, "many.yaml", f"{MAX_POLICY_RULES + 1} rules", "over the limit")


def test_rules_are_counted_with_what_a_policy_extends(sheet, tmp_path):
    """Each file under the limit, together over it: the chain counts (extends: a file beside it)."""
    half = MAX_POLICY_RULES // 2 + 1
    (tmp_path / "base.yaml").write_text("id: base\ntitle: t\nversion: '1'\nrules:\n" + _rules(half))
    policy = tmp_path / "top.yaml"
    policy.write_text(
        "id: top\ntitle: t\nversion: '1'\nextends: base.yaml\nrules:\n"
        + _rules(half).replace("id: r", "id: s")
    )
    ran = cli("check", sheet / "factsheet.json", "-p", policy, "-o", tmp_path / "out")
    assert_refused(ran, "base.yaml", "with what it extends", "over the limit")


def test_an_alias_bomb_policy_is_refused(sheet, tmp_path):
    """A few lines of YAML anchors stand for 10^8 values once expanded."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    policy = tmp_path / "bomb.yaml"
    policy.write_text("id: bomb\ntitle: t\nversion: '1'\n" + "\n".join(lines) + "\nrules: []\n")
    ran = cli("check", sheet / "factsheet.json", "-p", policy, "-o", tmp_path / "out")
    assert_refused(ran, "bomb.yaml", "aliases are expanded")


def test_a_5000_digit_index_in_a_policy_path_is_refused(sheet, tmp_path):
    policy = tmp_path / "index.yaml"
    policy.write_text(
        "id: index\ntitle: t\nversion: '1'\nrules:\n"
        f"  - {{id: r, title: t, field: 'load.points[{'9' * 5000}].result.metrics.completed', op: exists}}\n"
    )
    out = tmp_path / "out"
    ran = cli("check", sheet / "factsheet.json", "-p", policy, "-o", out)
    assert_refused(ran, "index.yaml", "index of 5,000 digits")
    assert len(ran.stderr) < 500  # the path is cut short in the message, not quoted whole
    assert_nothing_written(out)


def test_too_many_load_points_are_refused(sheet, tmp_path):
    """The issue's attack: 200 load points took 48 s and 0.8 GB to render."""
    edit(sheet, lambda d: d["load"].update(points=d["load"]["points"] * 100))
    out = tmp_path / "out"
    for args in (["validate", sheet / "factsheet.json"], ["render", sheet / "factsheet.json", "-o", out]):
        ran = cli(*args)
        assert_refused(ran, "load.points", "200 load points", f"limit of {MAX_LOAD_POINTS}")
        assert ran.seconds < 60
    assert_nothing_written(out)


def test_an_oversized_records_file_is_refused_before_it_is_read(sheet):
    """A sparse file just over the limit: refused by its size (fstat), not after reading 64 MiB."""
    name = json.loads((sheet / "factsheet.json").read_text())["load"]["points"][0]["records"]["path"]
    with open(sheet / name, "r+b") as f:
        f.truncate(MAX_RECORDS_FILE_BYTES + 1)
    ran = cli("validate", sheet / "factsheet.json")
    assert_refused(ran, name, f"{MAX_RECORDS_FILE_BYTES + 1:,} bytes", "over the limit")


def test_an_oversized_factsheet_is_refused(sheet):
    with open(sheet / "factsheet.json", "r+b") as f:
        f.truncate(64 << 20)
    assert_refused(cli("validate", sheet / "factsheet.json"), "factsheet.json", "over the limit")


# -- files that are not files: /dev/zero (24 GB in 20 s before), a FIFO (hung for ever) -----------------


def _not_a_file(path: Path, kind: str) -> None:
    path.unlink()
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
@pytest.mark.parametrize("command", COMMANDS)
def test_factsheet_json_that_is_not_a_regular_file_is_refused(command, kind, sheet, honest, tmp_path):
    _not_a_file(sheet / "factsheet.json", kind)
    out = tmp_path / "out"
    ran = cli(*_command(command, sheet, out, honest), timeout=60)
    assert_refused(ran, "factsheet.json", "character device" if kind == "dev-zero" else "a FIFO")
    assert_nothing_written(out)


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_an_attestation_that_is_not_a_regular_file_is_refused(kind, sheet, keys):
    private, public = keys
    assert cli("sign", sheet / "factsheet.json", "--key", private).returncode == 0
    _not_a_file(sheet / "factsheet.intoto.jsonl", kind)
    ran = cli("verify", sheet / "factsheet.json", "--pubkey", public, timeout=60)
    assert_refused(ran, "factsheet.intoto.jsonl", "character device" if kind == "dev-zero" else "a FIFO")


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_policy_that_is_not_a_regular_file_is_refused(kind, sheet, tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text("x")
    _not_a_file(policy, kind)
    ran = cli("check", sheet / "factsheet.json", "-p", policy, "-o", tmp_path / "out", timeout=60)
    assert_refused(ran, "p.yaml", "character device" if kind == "dev-zero" else "a FIFO")


def test_a_key_that_is_not_a_regular_file_is_refused(sheet, keys):
    """A public key may come with the factsheet, from its author."""
    private, _ = keys
    assert cli("sign", sheet / "factsheet.json", "--key", private).returncode == 0
    ran = cli("verify", sheet / "factsheet.json", "--pubkey", "/dev/zero", timeout=60)
    assert_refused(ran, "/dev/zero", "character device")


def test_a_deep_compliance_report_given_to_sign_is_refused(sheet, keys, tmp_path):
    private, _ = keys
    report = tmp_path / "compliance.json"
    report.write_bytes(DEEP)
    ran = cli("sign", sheet / "factsheet.json", "--key", private, "--compliance", report)
    assert_refused(ran, "compliance.json", "nested more than")
    assert not (sheet / "factsheet.intoto.jsonl").exists()


# -- the honest factsheet is untouched by all this ------------------------------------------------------


def test_the_honest_factsheet_still_validates_renders_checks_and_verifies(sheet, keys, tmp_path):
    private, public = keys
    f = sheet / "factsheet.json"
    assert cli("validate", f).returncode == 0
    ran = cli("render", f, "-o", tmp_path / "r")
    assert ran.returncode == 0, ran.stderr
    ran = cli("check", f, "-p", "eu-ai-act-technical-documentation", "-o", tmp_path / "c")
    assert ran.returncode in (0, 1) and "error:" not in ran.stderr, ran.stderr  # a verdict, not a refusal
    assert (tmp_path / "c" / "compliance.json").is_file()
    assert cli("sign", f, "--key", private).returncode == 0
    ran = cli("verify", f, "--pubkey", public)
    assert ran.returncode == 0, ran.stderr
