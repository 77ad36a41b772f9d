"""The pre-registered gate's plan, held to time and shown escaped (issue 42): `sign` keeps a plan beside the
factsheet bound (or refuses), a plan dated in the future or after the measurements started never verifies as
"before measuring", and a plan's text is never printed raw."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from factsheet.attest import dsse
from factsheet.attest.attestation import load_private, sign_factsheet
from factsheet.attest.plan import PLAN_TYPE
from factsheet.attest.statement import STATEMENT_TYPE
from tests.attest.attest_helpers import run_cli

# One worker: the folder's one build (conftest `built`) made once (tests/conftest.py).
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("attest-built")]

PLAN = "factsheet.plan.intoto.jsonl"
RAW = ("\x1b", "\x07", "\u202e")


def _started(folder: Path) -> str:
    return json.loads((folder / "factsheet.json").read_text())["provenance"]["started_at"]


def _plan(folder: Path, key: Path, planned_at: str) -> dict:
    """A plan of the (ungated) sheet's gate, no policies, signed with `key`; returns its binding."""
    st = {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": "spec.yaml", "digest": {"sha256": "00" * 32}}],
        "predicateType": PLAN_TYPE,
        "predicate": {"policies": [], "plannedAt": planned_at},
    }
    env = dsse.sign(json.dumps(st, sort_keys=True).encode(), load_private(key))
    line = json.dumps(env, separators=(",", ":")).encode() + b"\n"
    (folder / PLAN).write_bytes(line)
    return {"name": PLAN, "digest": {"sha256": hashlib.sha256(line).hexdigest()}, "plannedAt": planned_at}


def _verify(folder: Path, pub: Path):
    return run_cli("verify", folder / "factsheet.json", "--pubkey", pub)


def _one_line(result, code: int, *words: str) -> None:
    out = result.stdout + result.stderr
    assert result.returncode == code, out
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in out, out
    assert not any(c in out for c in RAW), repr(out)  # shown as code points, never sent to the terminal
    for w in words:
        assert w in result.stderr, result.stderr


def test_sign_keeps_the_plan_beside_the_factsheet_bound(fresh, keys):
    _plan(fresh, keys[0], _started(fresh))
    signed = run_cli("sign", fresh / "factsheet.json", "--key", keys[0])
    assert signed.returncode == 0, signed.stderr
    st = json.loads(base64.b64decode(json.loads((fresh / "factsheet.intoto.jsonl").read_text())["payload"]))
    assert st["predicate"]["plan"]["name"] == PLAN  # was: dropped, the pages still claiming it
    out = _verify(fresh, keys[1])
    assert out.returncode == 0 and "gate pre-registered" in out.stdout, out.stderr


def test_sign_refuses_a_plan_it_cannot_bind(fresh, keys, tmp_path):
    assert run_cli("keygen", "-o", tmp_path / "other").returncode == 0
    _plan(fresh, tmp_path / "other" / "factsheet-signing.key", _started(fresh))
    _one_line(run_cli("sign", fresh / "factsheet.json", "--key", keys[0]), 1, PLAN, "cannot bind")
    assert not (fresh / "factsheet.intoto.jsonl").exists()


@pytest.mark.parametrize(
    ("planned_at", "words"),
    [
        ("2030-01-01T00:00:00+00:00", ("in the future",)),
        ("later", ("after the measurements started",)),  # a second after the sheet's start, in the past
        ("2026-01-01\x1b]0;pwned\x07\u202eZ", ("<U+001B>", "<U+202E>", "not a time")),
    ],
    ids=["dated-2030", "after-measuring", "control-characters"],
)
def test_a_plan_not_set_before_measuring_never_verifies(fresh, keys, planned_at, words):
    if planned_at == "later":
        from datetime import datetime, timedelta

        planned_at = (datetime.fromisoformat(_started(fresh)) + timedelta(seconds=1)).isoformat()
    binding = _plan(fresh, keys[0], planned_at)
    _one_line(run_cli("sign", fresh / "factsheet.json", "--key", keys[0]), 1, *words)
    # bound by hand with the trusted key (as a build would bind it): verify refuses it all the same
    sign_factsheet(fresh / "factsheet.json", load_private(keys[0]), plan=binding)
    _one_line(_verify(fresh, keys[1]), 1, *words)
