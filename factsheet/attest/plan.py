"""The pre-registered gate (after in-toto PR #587): `factsheet build` with policies and a key signs a plan
statement, the policies as applied with their digests, the spec's digest and the time, before the first
request is sent. It is written as `<stem>.plan.intoto.jsonl`; the final attestation binds it by digest, and
`verify` fails when the gate the factsheet states ran other policies than the plan's."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
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
from probes.core.untrusted.text import printable

PLAN_TYPE = "https://llm-factsheet.dev/attestation/plan/v0.1"
PLAN_SUFFIX = ".plan.intoto.jsonl"
# A verifier's clock may lag the signer's a little; a plan dated further ahead is not "before measuring".
CLOCK_SKEW = timedelta(minutes=5)


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
        path = plan_path(json_path)
        write_atomic(path, self.line)
        digest = hashlib.sha256(self.line).hexdigest()
        return {"name": path.name, "digest": {"sha256": digest}, "plannedAt": self.planned_at}


def plan_path(json_path: Path) -> Path:
    return Path(json_path).with_name(Path(json_path).stem + PLAN_SUFFIX)


def bind_existing(json_path: Path, public: Ed25519PublicKey, sheet: Factsheet) -> dict | None:
    """`factsheet sign` of a folder whose build pre-registered its gate: the plan beside the factsheet is bound
    again (its pages say the gate was set before measuring, and a signature that dropped the plan would leave
    them saying it unbound). A plan this key did not sign, or that does not hold, refuses the signing
    (CheckFailed, exit 1): re-render the factsheet (which drops the claim) and remove the plan to sign it so.
    None where there is no plan."""
    path = plan_path(json_path)
    if not path.exists() and not path.is_symlink():
        return None
    folder = Path(json_path).parent
    raw = read_confined(folder, path.name, MAX_ATTESTATION_BYTES, "plan", no_symlinks=True)
    binding = {"name": path.name, "digest": {"sha256": hashlib.sha256(raw).hexdigest()}}
    try:
        verify_plan(folder, binding, public, sheet)
    except CheckFailed as exc:
        raise CheckFailed(
            f"{exc} — a plan beside the factsheet (its pages say the gate was set before measuring) is "
            "bound by the signature or nothing is signed: this signature cannot bind it"
        ) from None
    binding["plannedAt"] = _planned(folder, path.name, public)
    return binding


def _planned(folder: Path, name: str, public: Ed25519PublicKey) -> str:
    """The plannedAt a verified plan states (as it is written there)."""
    raw = read_confined(folder, name, MAX_ATTESTATION_BYTES, "plan", no_symlinks=True)
    return str(parse_json(dsse.parse(parse_json(raw.strip(), name)).payload, name)["predicate"]["plannedAt"])


def _time(value: object, what: str) -> datetime:
    """An ISO 8601 time with its zone (as `utc_now` writes it); CheckFailed showing the text escaped if not."""
    try:
        t = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        t = None
    if t is None or t.tzinfo is None:
        raise CheckFailed(f"{what} {printable(str(value))} is not a time with its zone")
    return t


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
    at = _time(pred.get("plannedAt"), f"{name}: plannedAt")
    if "plannedAt" in bound and bound["plannedAt"] != pred.get("plannedAt"):
        raise CheckFailed(f"{name}: the attestation states another plannedAt than the plan")
    if at > datetime.now(UTC) + CLOCK_SKEW:
        raise CheckFailed(
            f"{name}: plannedAt {at.isoformat()} is in the future: never a gate set before measuring"
        )
    started = _time(sheet.provenance.started_at, "provenance.started_at")
    if at > started:
        raise CheckFailed(
            f"{name}: plannedAt {at.isoformat()} is after the measurements started ({started.isoformat()}): "
            "not a gate set before measuring"
        )
    return f"gate pre-registered: its {len(ran)} policies were signed at {at.isoformat()}, before measuring"
