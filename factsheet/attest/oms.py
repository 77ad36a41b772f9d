"""OpenSSF Model Signing (OMS 1.0) interop: the served weights folder signed as an OMS bundle with
`model-signing`'s own-key method (offline), bound to the factsheet's attestation, and checked by `verify`.

model-signing's own-key method accepts elliptic-curve keys only (P-256, P-384, P-521; its
`_check_supported_ec_key`), not Ed25519: the OMS key is an EC key beside the factsheet's Ed25519 key.
The bundle (`<stem>.model.sig`, a Sigstore bundle around a DSSE in-toto statement whose predicate lists every
file with its sha256) verifies with `model_signing verify key FOLDER --signature ... --public_key ...` too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import tempfile
from pathlib import Path, PurePosixPath

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from factsheet.attest.keys import KeyFileError, first_line, read_key
from factsheet.document.schema import Factsheet
from factsheet.untrusted.limits import MAX_ATTESTATION_BYTES
from factsheet.untrusted.parsing import parse_json
from factsheet.untrusted.reading import hash_confined, read_given
from probes.core.digests import bare
from probes.core.errors import CheckFailed, InputError

OMS_PREDICATE_TYPE = "https://model_signing/signature/v1.0"
OMS_SUFFIX = ".model.sig"
CURVES = ("secp256r1", "secp384r1", "secp521r1")  # what model-signing's own-key method accepts
# A weight file is hashed in blocks (bounded memory); its size is bounded only against a runaway device file.
MAX_MODEL_FILE_BYTES = 1 << 40


def _model_signing():
    """model-signing (the `oms` extra), imported where OMS signing is asked for: it brings sigstore."""
    try:
        # deferred: model-signing is the optional `oms` extra; it brings sigstore (~0.3 s)
        import model_signing
    except ImportError as exc:
        raise InputError(
            f"OMS signing needs model-signing: pip install 'llm-factsheet[oms]' ({exc.name})"
        ) from None
    return model_signing


def oms_path(json_path: Path) -> Path:
    """factsheet.json -> factsheet.model.sig (the OMS bundle, beside the factsheet)."""
    return json_path.with_name(json_path.stem + OMS_SUFFIX)


def _check_curve(key, path: Path, what: str) -> None:
    if (
        not isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey)
        or key.curve.name not in CURVES
    ):
        kind = (
            key.curve.name
            if isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey)
            else type(key).__name__
        )
        raise KeyFileError(
            f"{path}: not an EC P-256/P-384/P-521 {what} ({kind}); model-signing's own-key method accepts only these"
        )


def check_private(path: Path) -> None:
    """The OMS private key: an unencrypted PEM EC key on a supported curve (exit 2 otherwise)."""
    data = read_key(path, "OMS private key")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError as exc:
        raise KeyFileError(f"{path}: encrypted private keys are not supported ({exc})") from exc
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path}: not a PEM private key ({first_line(exc)})") from exc
    _check_curve(key, path, "private key")


def check_public(path: Path) -> None:
    data = read_key(path, "OMS public key")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path}: not a PEM public key ({first_line(exc)})") from exc
    _check_curve(key, path, "public key")


def served_files(sheet: Factsheet) -> dict[str, str]:
    """The files the factsheet says were served (identity.served_model.digests, bare hex), without the GGUF a
    conversion started from (its digest is the conversion's cache_key: an input, not a served file)."""
    served = sheet.identity.served_model
    if served is None:
        return {}
    source = (served.conversion or {}).get("cache_key")
    return {name: bare(d) for name, d in served.digests.items() if d != source}


def _folder_files(folder: Path) -> dict[str, str]:
    """Every regular file under `folder` (relative POSIX names) with its sha256; a symlink is refused (exit 2),
    as model-signing refuses it."""
    if not folder.is_dir():
        raise InputError(f"--model-folder {folder.name}: not a folder")
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_symlink():
            raise InputError(f"--model-folder: {rel} is a symbolic link (an OMS signature covers files only)")
        if p.is_file() and not any(part.startswith(".git") for part in PurePosixPath(rel).parts):
            h = hashlib.sha256()
            hash_confined(folder, rel, MAX_MODEL_FILE_BYTES, "model file", h)
            out[rel] = h.hexdigest()
    return out


def _bundle_manifest(raw: bytes, where: str) -> tuple[str, dict[str, str]]:
    """(manifest digest, {file: sha256}) of an OMS bundle: its statement's one subject is the model, whose
    digest is the manifest's; its predicate lists every file."""
    try:
        bundle = parse_json(raw, where)
        st = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
        if st["predicateType"] != OMS_PREDICATE_TYPE:
            raise ValueError(f"predicate type {st['predicateType']!r}")
        manifest = st["subject"][0]["digest"]["sha256"]
        files = {r["name"]: r["digest"] for r in st["predicate"]["resources"] if r["algorithm"] == "sha256"}
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise InputError(f"{where}: not an OMS (model-signing v1.0) sha256 bundle ({exc})") from None
    return manifest, files


def sign_model(
    folder: Path, key: Path, out: Path, served: dict[str, str], sheet: Factsheet | None = None
) -> tuple[bytes, dict]:
    """Sign the served weights folder as an OMS bundle at `out`; returns the binding the attestation carries
    (the bundle's digest, the manifest's digest, each file's). When the factsheet names the served files,
    the bundle covers exactly those: one missing from the folder is bad input (exit 2), one whose bytes differ
    from the factsheet's digest fails (exit 1), other files in the folder are left out (ignored paths, which
    the bundle records and `model_signing verify` honours)."""
    check_private(key)
    ms = _model_signing()
    folder = Path(folder)
    files = _folder_files(folder)
    if served:
        missing = sorted(set(served) - set(files))
        if missing:
            raise InputError(
                f"--model-folder: lacks the served file(s) the factsheet names: {', '.join(missing)}"
            )
        differ = sorted(n for n in served if files[n] != served[n])
        if differ:
            raise CheckFailed(
                f"--model-folder: {', '.join(differ)} differ from the digests the factsheet states"
            )
    ignored = sorted(set(files) - set(served)) if served else []
    config = ms.hashing.Config().set_ignored_paths(paths=ignored)
    with tempfile.TemporaryDirectory() as tmp:  # model-signing writes in place; ours is written atomically
        sig = Path(tmp) / "model.sig"
        ms.signing.Config().use_elliptic_key_signer(private_key=str(key)).set_hashing_config(config).sign(
            folder, sig
        )
        raw = sig.read_bytes()
    manifest, covered = _bundle_manifest(raw, out.name)
    return raw, {
        "bundle": {"name": out.name, "digest": {"sha256": hashlib.sha256(raw).hexdigest()}},
        "predicateType": OMS_PREDICATE_TYPE,
        "manifest": {"digest": {"sha256": manifest}},
        "files": covered,
    }


def _sha256_of(descriptor: object) -> object:
    """`descriptor.digest.sha256` of a signed binding, None where its shape is another."""
    digest = descriptor.get("digest") if isinstance(descriptor, dict) else None
    return digest.get("sha256") if isinstance(digest, dict) else None


def verify_model(
    folder: Path, pubkey: Path, factsheet_folder: Path, binding: object, served: dict[str, str]
) -> str:
    """The OMS bundle the attestation binds: its bytes match the signed digest, it verifies on `folder` under
    `pubkey` (model-signing), and it covers exactly the files the attestation names, which are the ones the
    factsheet says were served (where it names them). CheckFailed (exit 1) names what differs."""
    check_public(pubkey)
    ms = _model_signing()
    ok = (
        isinstance(binding, dict)
        and isinstance(binding.get("bundle"), dict)
        and isinstance(binding.get("files"), dict)
    )
    if not ok:
        raise CheckFailed("the attestation binds no OMS bundle (sign with --model-folder)")
    name = binding["bundle"].get("name")
    if not isinstance(name, str) or "/" in name or name.startswith("."):
        raise InputError("the signed OMS binding names no bundle beside the factsheet")
    try:
        raw = read_given(factsheet_folder / name, MAX_ATTESTATION_BYTES, "OMS bundle")
    except FileNotFoundError:
        raise CheckFailed(f"{name} is missing") from None
    if hashlib.sha256(raw).hexdigest() != _sha256_of(binding["bundle"]):
        raise CheckFailed(f"{name} differs from its signed digest")
    manifest, covered = _bundle_manifest(raw, name)
    if covered != binding["files"] or manifest != _sha256_of(binding.get("manifest")):
        raise CheckFailed(f"{name}: covers other files than the attestation names")
    if served and covered != served:
        other = sorted(
            set(covered) ^ set(served) | {n for n in covered if served.get(n) not in (None, covered[n])}
        )
        raise CheckFailed(
            f"{name}: covers other files than the factsheet says were served: {', '.join(other)}"
        )
    files = _folder_files(Path(folder))
    changed = sorted(n for n in covered if files.get(n) != covered[n])
    if changed:  # named by our own hashing: model-signing's message carries machine paths and raw digests
        raise CheckFailed(f"{name}: model file(s) differ from the OMS signature: {', '.join(changed)}")
    try:
        ms.verifying.Config().use_elliptic_key_verifier(public_key=str(pubkey)).verify(
            Path(folder), factsheet_folder / name
        )
    except Exception as exc:  # noqa: BLE001 - model-signing raises ValueError and others; any is a failed check
        raise CheckFailed(
            f"{name}: does not verify under the OMS public key ({type(exc).__name__})"
        ) from None
    return f"OMS bundle {name} verifies on the model folder: {len(covered)} files, manifest sha256:{manifest}"
