"""Printed text goes through one escaper (issue 42 item 7): a path, a records name, a note from a signed
document is data. Rich markup in it is text (a path holding `[red]x[/red]` printed as it is, one holding
`[/x]` no MarkupError), and terminal controls (ESC, OSC, CSI, U+202E) are shown as code points, never sent.
Before, `[red]x[/red]` vanished from `validate`'s and `verify`'s answers and `[/x]` made them exit 3
("MarkupError"); an ESC in a path went to the terminal raw on success."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from factsheet import api
from factsheet.api.signing import VerifyResult
from factsheet.cli.commands import app
from factsheet.cli.common import Terminal
from tests.hostile.untrusted_builds import cli
from tests.support import mock_spec

MARKUP = "a[red]x[/red]b"
CLOSING = "c[/x]d"
CONTROLS = "e\x1b[2J\x1b]0;owned\x07\x1b[31m\u202ef"
CONTROLS_SHOWN = "e<U+001B>[2J<U+001B>]0;owned<U+0007><U+001B>[31m<U+202E>f"
RAW = ("\x1b", "\x07", "\u202e")


def test_the_terminal_prints_data_as_it_is_and_shows_controls(capsys):
    Terminal().print(f"{MARKUP} {CLOSING} :smile: {CONTROLS} [bold]")
    out = capsys.readouterr().out
    assert out == f"{MARKUP} {CLOSING} :smile: {CONTROLS_SHOWN} [bold]\n"


@pytest.mark.parametrize("name", [MARKUP, CLOSING], ids=["markup", "closing-tag"])
def test_validate_prints_a_spec_path_holding_markup_as_it_is(tmp_path, name):
    folder = tmp_path / name
    folder.mkdir(parents=True)
    spec = mock_spec.endpoint_spec(folder, "http://127.0.0.1:9")
    result = CliRunner().invoke(app, ["validate", str(spec)])
    assert result.exit_code == 0, result.output
    assert f"{spec}: valid build spec" in result.stdout


def test_validate_shows_the_controls_in_a_spec_path(tmp_path):
    folder = tmp_path / CONTROLS
    folder.mkdir(parents=True)
    spec = mock_spec.endpoint_spec(folder, "http://127.0.0.1:9")
    result = CliRunner().invoke(app, ["validate", str(spec)])
    assert result.exit_code == 0, result.output
    assert f"{tmp_path}/{CONTROLS_SHOWN}/model.yaml: valid build spec" in result.stdout
    assert not any(c in result.stdout for c in RAW)


@pytest.mark.parametrize("name", [MARKUP, CLOSING, CONTROLS], ids=["markup", "closing-tag", "controls"])
def test_build_validate_sign_verify_print_a_hostile_folder_name_as_data(tmp_path, honest, keys, name):  # noqa: F811
    """The CLI as a user runs it, on a real factsheet copied into a folder named `name`: each answer and
    each error names the folder as it is (controls shown), exit codes as for an honest name."""
    private, public = keys
    shown = name.replace(CONTROLS, CONTROLS_SHOWN)
    sheet = tmp_path / name
    shutil.copytree(honest, sheet)
    f = sheet / "factsheet.json"
    ran = cli("validate", f)
    assert ran.returncode == 0, ran.stderr
    assert f"{shown}/factsheet.json: valid factsheet" in ran.stdout
    ran = cli("sign", f, "--key", private)
    assert ran.returncode == 0, ran.stderr
    assert f"{shown}/factsheet.intoto.jsonl" in ran.stdout
    ran = cli("verify", f, "--pubkey", public)
    assert ran.returncode == 0, ran.stderr
    assert f"{shown}/factsheet.json: verified" in ran.stdout
    # errors: a missing attestation, a spec that cannot be read
    ran = cli("verify", f, "--pubkey", public, "--attestation", sheet / "missing.intoto.jsonl")
    assert ran.returncode == 2 and f"{shown}/missing.intoto.jsonl" in ran.stderr, ran.stderr
    ran = cli("build", sheet / "model.yaml", "-o", tmp_path / "out")
    assert ran.returncode == 2 and f"{shown}/model.yaml" in ran.stderr, ran.stderr
    for text in (ran.stdout, ran.stderr):
        assert not any(c in text for c in RAW)


def test_a_build_prints_what_it_wrote_into_a_hostile_folder_as_it_is(tmp_path, mock_url):  # noqa: F811
    spec = mock_spec.endpoint_spec(tmp_path, mock_url, points=((1, 4),))
    out = tmp_path / f"{MARKUP}{CLOSING}{CONTROLS}"
    ran = cli("build", spec, "-o", out)
    assert ran.returncode == 0, ran.stderr
    shown = f"{tmp_path}/{MARKUP}{CLOSING}{CONTROLS_SHOWN}"
    assert f"  {shown}/factsheet.json" in ran.stdout, ran.stdout
    assert not any(c in ran.stdout + ran.stderr for c in RAW)


def test_verify_shows_the_controls_in_a_signed_plans_time(tmp_path, monkeypatch):
    """A signer holding the key may write anything into a plan's `plannedAt`: `verify` prints the note that
    quotes it with ESC, OSC and U+202E as code points (before: sent raw to the terminal)."""
    planted = f"2026-01-01T00:00:00Z{CONTROLS}"
    note = f"gate pre-registered: its 1 policies were signed at {planted}, before measuring"
    result = VerifyResult(key_id="k", subjects=("factsheet.json",), notes=(note,))
    monkeypatch.setattr(api, "verify_factsheet", lambda *args: result)
    f = tmp_path / "factsheet.json"
    f.write_text("{}")
    key = tmp_path / "k.pub"
    key.write_text("-")
    ran = CliRunner().invoke(app, ["verify", str(f), "--pubkey", str(key)])
    assert ran.exit_code == 0, ran.output
    assert f"signed at 2026-01-01T00:00:00Z{CONTROLS_SHOWN}, before measuring" in ran.stdout
    assert not any(c in ran.stdout for c in RAW)
