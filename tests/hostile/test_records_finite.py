"""A records line with a non-finite number (`Infinity`, `NaN`, `1e400`) under a restated digest: the figures
recomputed from it would overflow (exit 3 before); the records are malformed and back no figure (exit 1)."""

# ruff: noqa: F811 (the fixtures imported from untrusted_builds are named as test parameters)
from __future__ import annotations

import hashlib
import json

import pytest

from tests.hostile.untrusted_builds import cli, edit

pytestmark = pytest.mark.system


@pytest.mark.parametrize("number", ["Infinity", "NaN", "1e400"])
def test_non_finite_number_in_a_record_is_malformed_records(sheet, number):
    data = json.loads((sheet / "factsheet.json").read_text())
    rec = data["load"]["points"][0]["records"]
    lines = (sheet / rec["path"]).read_bytes().splitlines(keepends=True)
    last = json.loads(lines[-1])
    last["end_s"] = "__X__"
    lines[-1] = json.dumps(last).replace('"__X__"', number).encode() + b"\n"
    content = b"".join(lines)
    (sheet / rec["path"]).write_bytes(content)

    def restate(d):
        d["load"]["points"][0]["records"]["sha256"] = "sha256:" + hashlib.sha256(content).hexdigest()

    edit(sheet, restate)
    ran = cli("validate", sheet / "factsheet.json")
    assert ran.returncode == 1, ran
    assert (
        "malformed records" in ran.stdout + ran.stderr and "not a finite number" in ran.stdout + ran.stderr
    ), ran
