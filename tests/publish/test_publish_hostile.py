"""Issue 30, `publish` as hostile input meets it: a tracking URI that is no server's (`'::::not a uri'`,
`'http://[::1'`, `file:`, `ftp:`, an empty one from an unset CI variable), credentials in the URI, and a
server whose answer never ends. Before the fix the first four exited 3, `''` exited 0 after writing
`mlflow.db` and `mlruns/` into the working directory, the credentials were printed and an endless body took
3.6 GB. Now: one line, exit 2, nothing written where the command runs, secrets hidden, bodies bounded.

On a copy-free path to the frozen 1.0.0 fixture (publish only reads it); no MLflow server is needed."""

from __future__ import annotations

import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.publish import mlflow as publish_mlflow
from factsheet.spec.publish import shown_uri
from factsheet.untrusted.limits import MAX_MLFLOW_RESPONSE_BYTES
from probes.targets.ports import free_port
from tests.publish.mlflow_server import serving

pytest.importorskip("mlflow")
SHEET = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0" / "factsheet.json"


def _publish(uri: str, cwd: Path, monkeypatch):
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(app, ["publish", str(SHEET), "--mlflow-uri", uri])


def _one_line(result, *words: str) -> str:
    assert result.exit_code == 2, result.output
    assert not isinstance(result.exception, BaseException) or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert all(w in lines[0] for w in words), (words, lines[0])
    assert result.stdout == ""
    return lines[0]


@pytest.mark.parametrize(
    ("uri", "cause"),
    [
        ("::::not a uri", "mlflow_uri"),
        ("::::notauri", "no scheme"),
        ("http://[::1", "not a URI"),
        ("file:///tmp/mlruns", "file: is not a tracking server's"),
        ("ftp://example.org/runs", "ftp: is not a tracking server's"),
        ("", "empty"),
        ("sqlite:///mlflow.db", "sqlite:"),
        ("./mlruns", "no scheme"),
        ("http://h:99999", "Port out of range"),
        ("http://", "names no host"),
        ("http://host\x1b[2J/", "U+001B"),
    ],
)
def test_a_uri_that_is_no_tracking_server_is_refused_and_nothing_is_written(
    uri, cause, tmp_path, monkeypatch
):
    _one_line(_publish(uri, tmp_path, monkeypatch), "mlflow_uri", cause)
    assert list(tmp_path.iterdir()) == []  # no mlflow.db, no mlruns/


def test_a_build_spec_publish_section_is_held_to_the_same_rule():
    from pydantic import ValidationError

    from factsheet.spec.publish import PublishSpec

    with pytest.raises(ValidationError, match="empty"):
        PublishSpec(mlflow_uri="")


def test_credentials_in_the_uri_are_never_printed(tmp_path, monkeypatch):
    uri = f"http://alice:s3cr3tpw@127.0.0.1:{free_port()}/prefix?token=t0k3n"  # nothing listens there
    line = _one_line(_publish(uri, tmp_path, monkeypatch), "MLflow at")
    assert "s3cr3tpw" not in line and "t0k3n" not in line and "alice" not in line, line
    assert f"http://***@127.0.0.1:{uri.split(':')[3].split('/')[0]}/prefix?***" in line
    assert shown_uri("http://u:p@h:1/x?k=v") == "http://***@h:1/x?***"
    assert shown_uri("http://[::1") == "<unparseable URI>"


class _Endless(BaseHTTPRequestHandler):
    delay_s = 0.0  # between chunks: 0 for an endless fast body, > 0 for a slow drip
    redirect = False  # answer 302 to the same path (requests reads a redirect's body whole before following)

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(302 if self.redirect else 200)
        if self.redirect:
            self.send_header("Location", self.path)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        chunk = b" " * (1 << 16) if not self.delay_s else b" "
        try:
            while True:
                self.wfile.write(chunk)
                if self.delay_s:
                    time.sleep(self.delay_s)
        except OSError:  # the client hung up: what the bound is for
            pass

    do_POST = do_GET


@contextmanager
def _serving(delay_s: float, redirect: bool = False):
    handler = type("Handler", (_Endless,), {"delay_s": delay_s, "redirect": redirect})
    with serving(handler) as uri:
        yield uri


def test_an_endless_answer_is_cut_off_at_the_size_limit(tmp_path, monkeypatch):
    with _serving(0.0) as uri:
        start = time.monotonic()
        line = _one_line(_publish(uri, tmp_path, monkeypatch), f"{MAX_MLFLOW_RESPONSE_BYTES:,} bytes")
        assert time.monotonic() - start < 30, line
    assert list(tmp_path.iterdir()) == []


def test_a_slow_drip_answer_is_cut_off_by_time(tmp_path, monkeypatch):
    monkeypatch.setattr(publish_mlflow, "MAX_MLFLOW_RESPONSE_S", 1.0)
    with _serving(0.01) as uri:
        start = time.monotonic()
        _one_line(_publish(uri, tmp_path, monkeypatch), "took over 1 s")
        assert time.monotonic() - start < 20


@pytest.mark.parametrize("delay_s", [0.0, 0.01])
def test_a_redirects_endless_body_is_bounded_too(delay_s, tmp_path, monkeypatch):
    """A 302 whose body never ends: requests reads a redirect's body whole before it follows the redirect
    (outside the bound on the final answer: unbounded memory, or for ever at a slow drip)."""
    monkeypatch.setattr(publish_mlflow, "MAX_MLFLOW_RESPONSE_S", 1.0)
    with _serving(delay_s, redirect=True) as uri:
        start = time.monotonic()
        words = "took over 1 s" if delay_s else f"{MAX_MLFLOW_RESPONSE_BYTES:,} bytes"
        _one_line(_publish(uri, tmp_path, monkeypatch), words)
        assert time.monotonic() - start < 30
    assert list(tmp_path.iterdir()) == []
