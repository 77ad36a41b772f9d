"""Issue 30, the terminal side of the one escaping rule (factsheet/export/text.py): a message quoting
hostile text (a path, a name, a server's page) shows its control and bidi characters as code points and
never sends them. Before the fix an escape sequence in a quoted path reached the terminal raw."""

from __future__ import annotations

from typer.testing import CliRunner

from factsheet.cli.commands import app


def test_an_escape_sequence_in_a_quoted_path_is_shown_not_sent(tmp_path):
    missing = tmp_path / "a\x1b[2J\x1b]0;owned\x07\u202eb" / "factsheet.json"
    result = CliRunner().invoke(app, ["validate", str(missing)])
    assert result.exit_code == 2, result.output
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr and "\u202e" not in result.stderr
    assert "a<U+001B>[2J<U+001B>]0;owned<U+0007><U+202E>b" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
