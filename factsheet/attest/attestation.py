"""Signed attestation of a factsheet, verifiable offline: an in-toto Statement v1 over the factsheet's
files in a DSSE envelope signed with Ed25519, written as `<name>.intoto.jsonl` beside the JSON."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import ValidationError

from factsheet.attest import dsse, oms
from factsheet.attest.keys import generate, key_id, load_private, load_public
from factsheet.attest.plan import bind_existing, verify_plan
from factsheet.attest.predicates import (
    PREDICATE_TYPES,
    TEST_RESULT_TYPE,
    eval_result_statements,
    statement_label,
    test_result_statement,
)
from factsheet.attest.statement import (
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    file_sha256,
    statement,
    subject_names,
)
from factsheet.compliance.recheck import rechecked
from factsheet.compliance.report import ComplianceReport, PolicyApplied
from factsheet.compliance.verdict import (
    ComplianceVerdict,
    VerdictDiffers,
    rechecked_verdict,
    rerun,
    verdict_mismatch,
    verdict_of_report,
)
from factsheet.document.files import ATTESTATION_SUFFIX, RESULTS_SUFFIX
from factsheet.document.schema import Factsheet
from factsheet.rederive import validate as checks
from factsheet.rederive.validate import load_factsheet
from factsheet.spec.sign import SignSpec
from factsheet.untrusted.limits import MAX_ATTESTATION_BYTES
from factsheet.untrusted.parsing import parse_json
from factsheet.untrusted.reading import confined, read_confined, read_given
from probes.core.errors import CheckFailed, InputError, describe_validation_error
from probes.core.files import write_group

__all__ = [
    "ComplianceVerdict",
    "attestation_path",
    "build_signer",
    "generate",
    "key_id",
    "load_private",
    "load_public",
    "results_path",
    "sign_factsheet",
    "verify_envelopes",
    "verify_factsheet",
]


class MalformedAttestation(InputError):
    """The attestation file is not a DSSE envelope holding an in-toto Statement."""


def attestation_path(json_path: Path) -> Path:
    """factsheet.json -> factsheet.intoto.jsonl (the in-toto bundle convention: one envelope a line)."""
    return json_path.with_name(json_path.stem + ATTESTATION_SUFFIX)


def results_path(json_path: Path) -> Path:
    """factsheet.json -> factsheet.results.intoto.jsonl: the standard predicates' bundle."""
    return json_path.with_name(json_path.stem + RESULTS_SUFFIX)


@dataclass
class Signed:
    """What `sign_factsheet` wrote, and the compliance verdict it carries (the policies re-run, never read)."""

    attestation: Path
    results: Path | None = None
    oms: Path | None = None
    compliance: ComplianceVerdict | None = None


def sign_factsheet(
    json_path: Path,
    private: Ed25519PrivateKey,
    report: ComplianceReport | None = None,
    report_sha256: str | None = None,
    sheet: Factsheet | None = None,
    model_folder: Path | None = None,
    oms_key: Path | None = None,
    plan: dict | None = None,
) -> Signed:
    """Attest the factsheet at `json_path` and the files beside it.

    First the results bundle (with a compliance `report`, the gate as an in-toto Test Result whose verdict is
    the report's policies re-run on this sheet, each rule with its figures; and each headline figure as an
    eval result), then the project's statement, which covers the bundle as a subject and carries the verdict
    with the policies that give it, so `verify` re-runs them too. A report whose verdict the re-run does not
    give, or of another factsheet, fails (VerdictDiffers, exit 1).
    With `model_folder` and `oms_key` (an EC key), the files the served engine reads from the folder are
    signed as an OMS bundle (`<stem>.model.sig`, factsheet/attest/oms.py) and the statement binds it.
    The raw records are checked against the factsheet first: a signature must never vouch for
    records that no longer match the figures (CheckFailed, exit 1).
    All or nothing: every output is made in memory, then written to temporaries and renamed together; a
    refused or failed signing leaves the files of an earlier one as they were."""
    json_path = Path(json_path)
    sheet = sheet or load_factsheet(json_path)
    folder = json_path.parent
    _check_signable(sheet, json_path, model_folder, oms_key)
    if plan is None:  # a folder whose build pre-registered its gate keeps the plan bound, or is not signed
        plan = bind_existing(json_path, private.public_key(), sheet)
    verdict, again = None, None
    if report is not None:
        verdict, again = rechecked_verdict(sheet, json_path, report, report_sha256, "compliance report")
    bundle = results_path(json_path)
    outputs: dict[Path, bytes] = {}
    lines, bound = _results_bundle(sheet, json_path, private, verdict, again)
    if lines:
        outputs[bundle] = b"".join(line + b"\n" for line in lines)
    oms_binding, oms_out = None, None
    if model_folder is not None:
        oms_out = oms.oms_path(json_path)
        outputs[oms_out], oms_binding = oms.sign_model(
            Path(model_folder), Path(oms_key), oms_out, oms.served_files(sheet), sheet
        )
    rerun_of = None
    if again is not None:  # the policies as applied, so that verify re-runs them rather than trusting a word
        rerun_of = {
            "allowInsufficient": again.allow_insufficient,
            "policies": [p.model_dump(mode="json") for p in again.policies],
        }
    st = statement(sheet, folder, json_path.name, verdict, bound, oms_binding, plan, rerun_of)
    envelope = dsse.sign(json.dumps(st, sort_keys=True).encode(), private)
    out = attestation_path(json_path)
    outputs[out] = json.dumps(envelope, separators=(",", ":")).encode() + b"\n"
    write_group(outputs)
    if not lines and bundle.exists():  # a stale bundle of an earlier signing would be covered by nothing
        bundle.unlink()
    return Signed(out, bundle if lines else None, oms_out, verdict)


def _check_signable(
    sheet: Factsheet, json_path: Path, model_folder: Path | None, oms_key: Path | None
) -> None:
    """Before anything is made: the records match the figures, every file to sign is in the folder (confined
    first: a name leading outside it is refused before anything is looked up there), and an OMS request is
    whole, with a key of the right type."""
    folder = json_path.parent
    consistency_checks(sheet, json_path)
    names = subject_names(sheet, json_path.name)
    for n in names:
        confined(folder, n, "signed file", no_symlinks=True)
    missing = [n for n in names if not (folder / n).is_file()]
    if missing:
        raise InputError(
            f"{folder}: cannot sign, missing {', '.join(missing)} (render the factsheet first: factsheet render)"
        )
    if (model_folder is None) != (oms_key is None):
        raise InputError("OMS signing needs both --model-folder and --oms-key")
    if oms_key is not None:
        oms.check_private(oms_key)


def _results_bundle(
    sheet: Factsheet,
    json_path: Path,
    private: Ed25519PrivateKey,
    verdict: ComplianceVerdict | None,
    again: ComplianceReport | None,
) -> tuple[list[bytes], dict | None]:
    """The results bundle's signed lines (the gate's Test Result first, then each headline eval result) and
    its binding for the statement: the file's digest and each line's, so that verify names the line that
    changed, whatever byte it was. No lines: (empty, None)."""
    folder = json_path.parent
    results = eval_result_statements(sheet, folder, json_path.name)
    if verdict is not None and again is not None:
        results.insert(
            0, test_result_statement(sheet, folder, json_path.name, verdict, again.model_dump(mode="json"))
        )
    lines = [
        json.dumps(
            dsse.sign(json.dumps(st, sort_keys=True).encode(), private), separators=(",", ":")
        ).encode()
        for st in results
    ]
    if not lines:
        return lines, None
    content = b"".join(line + b"\n" for line in lines)
    bound = {
        "name": results_path(json_path).name,
        "digest": {"sha256": hashlib.sha256(content).hexdigest()},
        "lines": [hashlib.sha256(line).hexdigest() for line in lines],
    }
    return lines, bound


def build_signer(
    spec_sign: SignSpec | None, spec_path: Path, cli_key: Path | None
) -> Ed25519PrivateKey | None:
    """The key a build signs with (the CLI's --sign-key wins over the spec's `sign.key`), loaded before
    anything is measured so that a bad key costs seconds, not a whole build."""
    if cli_key is not None:
        return load_private(cli_key)
    if spec_sign is None:
        return None
    key = Path(spec_sign.key).expanduser()
    return load_private(key if key.is_absolute() else Path(spec_path).parent / key)


def consistency_checks(sheet: Factsheet, json_path: Path) -> list[str]:
    """What `factsheet validate` checks of a factsheet folder, before signing and after verifying: the raw
    records match their digests and every figure they determine recomputes to the stated value
    (CheckFailed naming each that differs), and the compliance summary re-checks."""

    folder = Path(json_path).parent
    return (
        checks.check_records(sheet, folder)
        + checks.check_figures(sheet, folder)
        + rechecked(sheet, Path(json_path))
    )


@dataclass
class Verification:
    key_id: str
    subjects: list[str]
    predicate: dict
    notes: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)  # the results bundle's statements, in words


def _read_envelopes(path: Path) -> list[dsse.Parsed]:
    try:  # a regular file within the limit (a FIFO or /dev/zero is refused before a byte is read)
        text = read_given(path, MAX_ATTESTATION_BYTES, "attestation")
    except OSError as exc:
        raise MalformedAttestation(f"{path}: cannot read attestation: {exc.strerror}") from exc
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise MalformedAttestation(f"{path}: empty attestation")
    try:  # each line's nesting and numbers bounded before it is parsed
        return [dsse.parse(parse_json(line, f"line {i}")) for i, line in enumerate(lines, 1)]
    except InputError as exc:  # dsse.MalformedEnvelope included
        raise MalformedAttestation(f"{path}: not a DSSE envelope: {exc}") from exc


def _inside(name: str) -> bool:
    """A subject names a file in the factsheet's folder, never one elsewhere on the verifier's disk."""
    p = PurePosixPath(name)
    return bool(name) and not p.is_absolute() and ".." not in p.parts and "\\" not in name


def _statement(payload: bytes, path: Path) -> dict:
    try:
        st = parse_json(payload, "signed payload")
    except InputError as exc:
        raise MalformedAttestation(f"{path}: {exc}") from exc
    ok = (
        isinstance(st, dict)
        and st.get("_type") == STATEMENT_TYPE
        and st.get("predicateType") == PREDICATE_TYPE
        and isinstance(st.get("subject"), list)
        and all(
            isinstance(s, dict)
            and isinstance(s.get("name"), str)
            and _inside(s["name"])
            and isinstance(s.get("digest"), dict)
            for s in st["subject"]
        )
    )
    if not ok:
        raise MalformedAttestation(f"{path}: signed payload is not an llm-factsheet in-toto Statement v1")
    return st


def verify_factsheet(
    json_path: Path,
    public_path: Path,
    attestation: Path | None = None,
    model_folder: Path | None = None,
    oms_pubkey: Path | None = None,
) -> Verification:
    """Exit-0 only when a signature verifies under the key AND every subject matches its file.

    Raises InputError (exit 2) for unreadable or malformed inputs, CheckFailed (exit 1) naming
    every file that differs or is missing, or the signature that does not verify."""
    json_path = Path(json_path)
    public = load_public(public_path)
    if (model_folder is None) != (oms_pubkey is None):
        raise InputError("checking the OMS bundle needs both --model-folder and --oms-pubkey")
    if oms_pubkey is not None:
        oms.check_public(oms_pubkey)
    att = attestation or attestation_path(json_path)
    found = verify_envelopes(json_path, public, _read_envelopes(att), att)
    bound = found.predicate.get("oms")
    if model_folder is not None:
        sheet = load_factsheet(json_path)
        found.notes.append(
            oms.verify_model(
                model_folder, oms_pubkey, json_path.parent, bound, oms.served_files(sheet), sheet
            )
        )
    elif bound is not None:
        found.notes.append(
            "an OMS bundle of the served weights is bound; not checked (give --model-folder, --oms-pubkey)"
        )
    return found


def verify_envelopes(
    json_path: Path, public: Ed25519PublicKey, envelopes: list[dsse.Parsed], att: Path
) -> Verification:
    """`verify_factsheet` on envelopes already read (the catalogue reads them confined to the factsheet's
    folder, a symlinked attestation refused); `att` names them in messages."""
    kid = key_id(public)
    signed = next((e for e in envelopes if dsse.verify(e, public) and _is_ours(e.payload)), None)
    if signed is None:
        raise CheckFailed(
            f"{att}: no valid signature by key {kid} (altered envelope or signature, or another key)"
        )
    st = _statement(signed.payload, att)
    folder = json_path.parent
    bound = st.get("predicate", {}).get("results") if isinstance(st.get("predicate"), dict) else None
    results, tests = ([], []) if bound is None else _verify_results(folder, bound, public, att)
    problems = []
    for s in st["subject"]:
        want = s["digest"].get("sha256")
        try:  # confined: a symlinked subject (even to an identical copy) is refused, exit 2
            got = file_sha256(folder, s["name"])
        except FileNotFoundError:
            problems.append(f"{s['name']} is missing")
            continue
        except OSError as exc:
            problems.append(f"{s['name']} cannot be read ({exc.strerror})")
            continue
        if want is None or got != want:
            problems.append(f"{s['name']} differs from its signed digest")
    if problems:  # before parsing the JSON: an altered factsheet is a failed check, not bad input
        raise CheckFailed(f"{json_path}: " + "; ".join(problems))
    sheet = load_factsheet(json_path)
    named = {s["name"] for s in st["subject"]}
    uncovered = [n for n in subject_names(sheet, json_path.name) if n not in named]
    if uncovered:
        raise CheckFailed(f"{json_path}: not covered by the attestation: {', '.join(uncovered)}")
    # What was signed is intact; the records must also still give the figures the factsheet states.
    notes = consistency_checks(sheet, json_path)
    pred = st.get("predicate") if isinstance(st.get("predicate"), dict) else {}
    if pred.get("compliance") is not None or tests:
        notes.append(_verdict_rerun(sheet, json_path, pred, tests))
    planned = st.get("predicate", {}).get("plan") if isinstance(st.get("predicate"), dict) else None
    if planned is not None:
        notes.append(verify_plan(folder, planned, public, sheet))
    return Verification(kid, [s["name"] for s in st["subject"]], st.get("predicate", {}), notes, results)


def _is_ours(payload: bytes) -> bool:
    """The project's statement among envelopes that all verify (a bundle's lines are signed by the same key)."""
    try:
        st = json.loads(payload)
    except ValueError:
        return True  # let _statement say what is wrong with it
    return not (isinstance(st, dict) and st.get("predicateType") in PREDICATE_TYPES)


def _verify_results(
    folder: Path, bound: object, public: Ed25519PublicKey, att: Path
) -> tuple[list[str], list[dict]]:
    """The results bundle the signed predicate names: each line a DSSE envelope that verifies under the
    key, holding an in-toto Statement of a known predicate type whose subjects match their files, then
    the whole file against its signed digest. The bundle is signed, so anything wrong in it is tampering
    (CheckFailed, exit 1) naming the line; returns the lines in words, and the Test Results' predicates."""
    ok = (
        isinstance(bound, dict)
        and isinstance(bound.get("name"), str)
        and _inside(bound["name"])
        and isinstance(bound.get("digest"), dict)
    )
    if not ok:
        raise MalformedAttestation(f"{att}: the signed results bundle is not a name and a digest")
    name, bundle_sha256 = bound["name"], bound["digest"].get("sha256")
    try:
        text = read_confined(folder, name, MAX_ATTESTATION_BYTES, "results bundle", no_symlinks=True)
    except FileNotFoundError:
        raise CheckFailed(f"{name} is missing") from None
    except OSError as exc:
        raise CheckFailed(f"{name} cannot be read ({exc.strerror})") from None
    out, tests = [], []
    line_sha256 = bound.get("lines") if isinstance(bound.get("lines"), list) else []
    for i, line in enumerate((t for t in text.splitlines() if t.strip()), 1):
        where = f"{name} line {i}"
        if i <= len(line_sha256) and hashlib.sha256(line).hexdigest() != line_sha256[i - 1]:
            raise CheckFailed(f"{where} differs from its signed digest")
        try:
            env = dsse.parse(parse_json(line, where))
        except InputError as exc:
            raise CheckFailed(f"{where}: not a DSSE envelope ({exc})") from None
        if not dsse.verify(env, public):
            raise CheckFailed(f"{where}: signature does not verify under key {key_id(public)}")
        try:
            st = parse_json(env.payload, where)
        except InputError as exc:
            raise CheckFailed(f"{where}: signed payload is not JSON ({exc})") from None
        subjects = st.get("subject") if isinstance(st, dict) else None
        if (
            not isinstance(st, dict)
            or st.get("_type") != STATEMENT_TYPE
            or st.get("predicateType") not in PREDICATE_TYPES
            or not isinstance(subjects, list)
            or not all(
                isinstance(s, dict) and isinstance(s.get("name"), str) and _inside(s["name"])
                for s in subjects
            )
        ):
            raise CheckFailed(f"{where}: not an in-toto Statement of a test or eval result")
        label = statement_label(st)
        for s in subjects:
            want = s.get("digest", {}).get("sha256") if isinstance(s.get("digest"), dict) else None
            try:
                got = file_sha256(folder, s["name"])
            except OSError:
                got = None
            if want is None or got != want:
                raise CheckFailed(f"{where} ({label}): subject {s['name']} differs from its signed digest")
        out.append(label)
        if st.get("predicateType") == TEST_RESULT_TYPE:
            tests.append(st.get("predicate") if isinstance(st.get("predicate"), dict) else {})
    if not out:
        raise CheckFailed(f"{name} is empty")
    if file_sha256(folder, name) != bundle_sha256:  # a line added, dropped or reordered
        raise CheckFailed(f"{name} differs from its signed digest")
    return out, tests


def _verdict_rerun(sheet: Factsheet, json_path: Path, pred: dict, tests: list[dict]) -> str:
    """A signed compliance verdict (in the predicate, and as the results bundle's Test Result) is the
    policies signed with it re-run on the sheet now: a verdict that cannot be re-run, or that the re-run does
    not give, fails (exit 1) whoever signed it."""
    where = "the signed compliance verdict"
    try:
        signed = ComplianceVerdict.model_validate(pred.get("compliance"))
    except ValidationError:
        raise VerdictDiffers(f"{where}: missing or malformed beside a signed Test Result") from None
    run = pred.get("complianceRun")
    if not isinstance(run, dict) or not isinstance(run.get("policies"), list):
        raise VerdictDiffers(f"{where} carries no policies to re-run on the sheet, so it is not vouched for")
    try:
        policies = [PolicyApplied.model_validate(p) for p in run["policies"]]
    except ValidationError as exc:
        raise InputError(f"{where}: its policies are malformed: {describe_validation_error(exc)}") from None
    again = rerun(sheet, json_path, policies, run.get("allowInsufficient") is True, where)
    verdict = verdict_of_report(again.model_dump(mode="json"))
    mismatch = verdict_mismatch(signed, verdict)
    if mismatch:
        raise VerdictDiffers(f"{where} is not what its policies give on the sheet: {mismatch}")
    for test in tests:  # the Test Result says the same: its result, and each rule under the same heading
        said = {k: [str(t).split(":")[0] for t in test.get(k) or []] for k in _TESTS}
        if test.get("result") != verdict.result or said != {
            k: getattr(verdict, f) for k, f in _TESTS.items()
        }:
            raise VerdictDiffers(
                f"the signed Test Result is not what its policies give on the sheet ({verdict.result})"
            )
    return f"compliance: {verdict.policy} re-run on the sheet: {verdict.result}, as signed"


_TESTS = {"passedTests": "passed_tests", "warnedTests": "warned_tests", "failedTests": "failed_tests"}
