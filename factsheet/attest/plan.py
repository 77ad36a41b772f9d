"""The pre-registered gate (after in-toto PR #587): `factsheet build` with policies and a key signs a plan
statement, the policies as applied with their digests, the spec's digest and the time, before the first
request is sent. It is written as `<stem>.plan.intoto.jsonl`; the final attestation binds it by digest, and
`verify` fails when the gate the factsheet states ran other policies than the plan's."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from factsheet.attest import dsse
from factsheet.attest.statement import STATEMENT_TYPE
from factsheet.compliance.policy import LoadedPolicy
from factsheet.document.compliance_summary import ComplianceSummary
from factsheet.document.schema import Factsheet
from factsheet.document.stamp import utc_now
from factsheet.untrusted.limits import MAX_ATTESTATION_BYTES
from factsheet.untrusted.parsing import parse_json
from factsheet.untrusted.reading import read_confined
from probes.core.digests import bare
from probes.core.errors import CheckFailed, InputError
from probes.core.files import write_atomic

PLAN_TYPE = "https://llm-factsheet.dev/attestation/plan/v0.1"
PLAN_SUFFIX = ".plan.intoto.jsonl"


class Plan:
    """A plan signed in memory before measuring; written beside the factsheet once the folder exists."""

    def __init__(
        self, policies: list[LoadedPolicy], spec_name: str, spec_sha256: str, key: Ed25519PrivateKey
    ):
        self.planned_at = utc_now()
        st = {
            "_type": STATEMENT_TYPE,
            "subject": [{"name": spec_name, "digest": {"sha256": bare(spec_sha256)}}],
            "predicateType": PLAN_TYPE,
            "predicate": {
                "policies": [{"id": p.id, "version": p.version, "sha256": p.sha256} for p in policies],
                "plannedAt": self.planned_at,
            },
        }
        envelope = dsse.sign(json.dumps(st, sort_keys=True).encode(), key)
        self.line = json.dumps(envelope, separators=(",", ":")).encode() + b"\n"

    def write(self, json_path: Path) -> dict:
        """Write the plan beside the factsheet; returns the binding the final attestation carries."""
        path = json_path.with_name(json_path.stem + PLAN_SUFFIX)
        write_atomic(path, self.line)
        digest = hashlib.sha256(self.line).hexdigest()
        return {"name": path.name, "digest": {"sha256": digest}, "plannedAt": self.planned_at}


def verify_plan(folder: Path, bound: object, public: Ed25519PublicKey, sheet: Factsheet) -> str:
    """The plan the attestation binds: its bytes, its signature under the same key, and the policies the
    factsheet's gate ran equal to the plan's (CheckFailed, exit 1, otherwise)."""
    ok = (
        isinstance(bound, dict)
        and isinstance(bound.get("name"), str)
        and isinstance(bound.get("digest"), dict)
    )
    if not ok or "/" in bound["name"] or bound["name"].startswith("."):
        raise InputError("the signed plan binding names no file beside the factsheet")
    name = bound["name"]
    try:
        raw = read_confined(folder, name, MAX_ATTESTATION_BYTES, "plan", no_symlinks=True)
    except FileNotFoundError:
        raise CheckFailed(f"{name} is missing") from None
    if hashlib.sha256(raw).hexdigest() != bound["digest"].get("sha256"):
        raise CheckFailed(f"{name} differs from its signed digest")
    env = dsse.parse(parse_json(raw.strip(), name))
    if not dsse.verify(env, public):
        raise CheckFailed(f"{name}: the plan's signature does not verify")
    st = parse_json(env.payload, name)
    pred = st.get("predicate") if isinstance(st, dict) and st.get("predicateType") == PLAN_TYPE else None
    if not isinstance(pred, dict) or not isinstance(pred.get("policies"), list):
        raise CheckFailed(f"{name}: not a plan statement")
    planned = sorted(str(p.get("sha256")) for p in pred["policies"] if isinstance(p, dict))
    c = sheet.compliance
    ran = sorted(p.sha256 for p in c.policies) if isinstance(c, ComplianceSummary) else []
    if planned != ran:
        raise CheckFailed(
            f"{name}: the gate's policies differ from the plan's (the bar moved after the plan)"
        )
    return f"gate pre-registered: its {len(ran)} policies were signed at {pred.get('plannedAt')}, before measuring"
