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
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import ec

from factsheet.attest.keys import KeyFileError, load_pem
from factsheet.document.schema import Factsheet
from factsheet.untrusted.limits import MAX_ATTESTATION_BYTES
from factsheet.untrusted.parsing import parse_json
from factsheet.untrusted.reading import hash_confined, kind_of, read_confined
from probes.core.digests import bare
from probes.core.errors import CheckFailed, InputError
from probes.core.untrusted.text import shown_text
from probes.targets.deployment import (
    GENERATION_FILE,
    ChatTemplate,
    GenerationDefaults,
    chat_template,
    generation_defaults,
)
from probes.targets.errors import TargetError

OMS_PREDICATE_TYPE = "https://model_signing/signature/v1.0"
OMS_SUFFIX = ".model.sig"
CURVES = ("secp256r1", "secp384r1", "secp521r1")  # what model-signing's own-key method accepts
# A weight file is hashed in blocks (bounded memory); its size is bounded only against a runaway device file.
MAX_MODEL_FILE_BYTES = 1 << 40
# A served model folder (Hugging Face layout) holds tens of files, a 405B model ~200 shards.
MAX_MODEL_FOLDER_ENTRIES = 4096
MAX_LEFT_OUT = 256
SPARSE_CHECK_BYTES = 1 << 30
# The top-level files the engine reads besides the weights (vLLM on transformers: config, generation config,
# tokenizer, chat template; a processor's configs for a multimodal model).
ENGINE_FILES = frozenset(
    {
        "config.json",
        "generation_config.json",
        "params.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "tokenizer.model",
        "tekken.json",
        "special_tokens_map.json",
        "added_tokens.json",
        "vocab.json",
        "vocab.txt",
        "merges.txt",
        "spiece.model",
        "chat_template.jinja",
        "chat_template.json",
        "processor_config.json",
        "preprocessor_config.json",
    }
)
WEIGHT_SUFFIXES = (
    ".safetensors",
    ".safetensors.index.json",
    ".bin",
    ".bin.index.json",
    ".gguf",
    ".pt",
    ".pth",
)


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
    _check_curve(load_pem(path, "OMS private key", private=True), path, "private key")


def check_public(path: Path) -> None:
    _check_curve(load_pem(path, "OMS public key", private=False), path, "public key")


def served_files(sheet: Factsheet) -> dict[str, str]:
    """The files the factsheet says were served (identity.served_model.digests, bare hex), without the GGUF a
    conversion started from (its digest is the conversion's cache_key: an input, not a served file)."""
    served = sheet.identity.served_model
    if served is None:
        return {}
    source = (served.conversion or {}).get("cache_key")
    return {name: bare(d) for name, d in served.digests.items() if d != source}


def engine_reads(name: str) -> bool:
    """Whether the serving engine reads this top-level file of a model folder (vLLM on transformers): the
    weights and their index, the model and generation configs, the tokenizer's files, the chat template and a
    processor's configs. A file in a subfolder (`original/`) or of another kind (README.md) it does not read."""
    return name in ENGINE_FILES or name.endswith(WEIGHT_SUFFIXES)


@dataclass
class Listing:
    """A model folder as walked (bounded, nothing followed): the top-level files the engine reads with their
    sizes, and every other top-level entry (left out of the signature: the engine does not read it)."""

    read: dict[str, int]
    left_out: list[str]


def list_folder(folder: Path) -> Listing:
    """Walk the model folder without reading a byte. A symlink anywhere (the folder itself included), a FIFO,
    a device or a socket is refused, as model-signing refuses it (exit 2, one line); so is a folder of more
    than MAX_MODEL_FOLDER_ENTRIES entries, or more than MAX_LEFT_OUT top-level entries the engine does not read
    (model-signing matches each path against each ignored one: 20,000 would take minutes)."""
    folder = Path(folder)
    if folder.is_symlink():
        raise InputError(f"--model-folder {folder.name}: a symbolic link (give the folder itself)")
    if not folder.is_dir():
        raise InputError(f"--model-folder {folder.name}: not a folder")
    read: dict[str, int] = {}
    left_out: list[str] = []
    seen = 0
    stack = [(folder, "")]
    while stack:
        here, prefix = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError as exc:
            raise InputError(f"--model-folder: {prefix or '.'} cannot be listed ({exc.strerror})") from None
        for entry in entries:
            seen += 1
            if seen > MAX_MODEL_FOLDER_ENTRIES:
                raise InputError(
                    f"--model-folder: more than {MAX_MODEL_FOLDER_ENTRIES:,} entries: not a served model folder"
                )
            rel = prefix + entry.name
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                stack.append((Path(entry.path), rel + "/"))
                if not prefix:
                    left_out.append(rel + "/")
            elif not stat.S_ISREG(st.st_mode):
                raise InputError(
                    f"--model-folder: {shown_text(rel)} is {kind_of(st.st_mode)} (an OMS signature covers "
                    "regular files only)"
                )
            elif not prefix and engine_reads(entry.name):
                read[entry.name] = st.st_size
            elif not prefix:
                left_out.append(rel)
    if len(left_out) > MAX_LEFT_OUT:
        raise InputError(
            f"--model-folder: {len(left_out):,} top-level entries the engine does not read (at most "
            f"{MAX_LEFT_OUT}): not a served model folder"
        )
    return Listing(dict(sorted(read.items())), sorted(left_out))


def _hash_files(folder: Path, names: list[str]) -> dict[str, str]:
    """The sha256 of each named top-level file (bounded, confined, never a sparse giant: refused first)."""
    out = {}
    for name in names:
        _refuse_sparse(folder, name)
        h = hashlib.sha256()
        hash_confined(folder, name, MAX_MODEL_FILE_BYTES, "model file", h)
        out[name] = h.hexdigest()
    return out


def _refuse_sparse(folder: Path, name: str) -> None:
    """A file of more than 1 GiB whose disk blocks hold less than an eighth of it is a sparse file, not
    weights: refused before hours of hashing zeros (exit 2)."""
    st = (Path(folder) / name).stat()
    if st.st_size > SPARSE_CHECK_BYTES and st.st_blocks * 512 < st.st_size // 8:
        raise InputError(
            f"--model-folder: {shown_text(name)} is a sparse file ({st.st_size:,} bytes, "
            f"{st.st_blocks * 512:,} on disk): not served weights"
        )


def check_deployment(folder: Path, sheet: Factsheet) -> list[str]:
    """The factsheet's stated deployment facts held to the folder: a chat template or generation config the
    build read from the served folder must still be the one there (read the way the engine reads it,
    probes/targets/deployment.py). Returns what differs, by file; a fact from a server flag is not the
    folder's to check."""
    facts = sheet.system.deployment
    if facts is None:
        return []
    problems = []
    stated = facts.chat_template
    if isinstance(stated, ChatTemplate) and not stated.source.startswith("--chat-template"):
        try:
            now = chat_template(folder, None)
        except TargetError as exc:
            now = None
            problems.append(f"the chat template cannot be read ({exc})")
        if now is not None and (
            not isinstance(now, ChatTemplate) or (now.source, now.sha256) != (stated.source, stated.sha256)
        ):
            where = stated.source.split(":")[0]
            problems.append(f"{where}: the chat template is not the one the factsheet states")
    gen = facts.generation_config
    if isinstance(gen, GenerationDefaults) and gen.source == GENERATION_FILE:
        try:
            again = generation_defaults(folder, "auto", None)
        except TargetError as exc:
            again = None
            problems.append(f"{GENERATION_FILE} cannot be read ({exc})")
        if again is not None and (not isinstance(again, GenerationDefaults) or again.sha256 != gen.sha256):
            problems.append(f"{GENERATION_FILE}: not the generation config the factsheet states")
    return problems


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
    """Sign the files the engine reads from the served folder as an OMS bundle; returns its bytes (written by
    the caller with the attestation) and the binding the attestation carries (the bundle's digest, the
    manifest's, each file's digest and size, and what was left out). The bundle covers every top-level file
    the engine reads (`engine_reads`: weights, configs, tokenizer files, chat template) and each file the
    factsheet names as served; a served file missing from the folder is bad input (exit 2); one whose bytes
    differ from the factsheet's digest, or a chat template or generation config other than the one the
    factsheet states, fails (exit 1). Everything else is left out, as an ignored path (recorded in the bundle,
    honoured by `model_signing verify`), and named. Only covered files are read."""
    check_private(key)
    ms = _model_signing()
    folder = Path(folder)
    listing = list_folder(folder)
    missing = sorted(set(served) - set(listing.read) - set(listing.left_out))
    if missing:
        raise InputError(
            f"--model-folder: lacks the served file(s) the factsheet names: {', '.join(missing)}"
        )
    covered_names = sorted(set(listing.read) | set(served))
    files = _hash_files(folder, covered_names)
    differ = sorted(n for n in served if files[n] != served[n])
    if sheet is not None:
        problems = check_deployment(folder, sheet)
        if differ or problems:
            named = [f"{', '.join(differ)} differ from the digests the factsheet states"] if differ else []
            raise CheckFailed("--model-folder: " + "; ".join(named + problems))
    elif differ:
        raise CheckFailed(f"--model-folder: {', '.join(differ)} differ from the digests the factsheet states")
    left_out = [n for n in listing.left_out if n not in served]
    config = ms.hashing.Config().set_ignored_paths(paths=[n.rstrip("/") for n in left_out])
    with tempfile.TemporaryDirectory() as tmp:  # model-signing writes in place; ours is written atomically
        sig = Path(tmp) / "model.sig"
        ms.signing.Config().use_elliptic_key_signer(private_key=str(key)).set_hashing_config(config).sign(
            folder, sig
        )
        raw = sig.read_bytes()
    manifest, covered = _bundle_manifest(raw, out.name)
    if covered != files:  # a file changed between our hashing and model-signing's
        raise CheckFailed(
            f"--model-folder: changed while it was signed: {', '.join(sorted(set(covered) ^ set(files)) or sorted(files))}"
        )
    return raw, {
        "bundle": {"name": out.name, "digest": {"sha256": hashlib.sha256(raw).hexdigest()}},
        "predicateType": OMS_PREDICATE_TYPE,
        "manifest": {"digest": {"sha256": manifest}},
        "files": covered,
        "sizes": {n: (folder / n).stat().st_size for n in covered},
        "leftOut": left_out,
    }


def _sha256_of(descriptor: object) -> object:
    """`descriptor.digest.sha256` of a signed binding, None where its shape is another."""
    digest = descriptor.get("digest") if isinstance(descriptor, dict) else None
    return digest.get("sha256") if isinstance(digest, dict) else None


def verify_model(
    folder: Path,
    pubkey: Path,
    factsheet_folder: Path,
    binding: object,
    served: dict[str, str],
    sheet: Factsheet | None = None,
) -> str:
    """The OMS bundle the attestation binds: its bytes match the signed digest; it covers the files the
    attestation names, among them every one the factsheet says was served; the folder holds exactly the
    covered files among those the engine reads (one added after signing, or missing, is named), each of the
    signed size; the factsheet's deployment facts hold on the folder; and model-signing verifies the bundle
    on it, hashing only the covered files. CheckFailed (exit 1) names what differs; what is left out is
    named in the note returned."""
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
    try:  # confined: a link (even to an identical copy elsewhere) is refused, never followed
        raw = read_confined(factsheet_folder, name, MAX_ATTESTATION_BYTES, "OMS bundle", no_symlinks=True)
    except FileNotFoundError:
        raise CheckFailed(f"{name} is missing") from None
    if hashlib.sha256(raw).hexdigest() != _sha256_of(binding["bundle"]):
        raise CheckFailed(f"{name} differs from its signed digest")
    manifest, covered = _bundle_manifest(raw, name)
    if covered != binding["files"] or manifest != _sha256_of(binding.get("manifest")):
        raise CheckFailed(f"{name}: covers other files than the attestation names")
    other = sorted(n for n, d in served.items() if covered.get(n) != d)
    if other:
        raise CheckFailed(
            f"{name}: does not cover the files the factsheet says were served: {', '.join(other)}"
        )
    folder = Path(folder)
    listing = list_folder(folder)
    present = set(listing.read) | (set(covered) & set(listing.left_out))
    missing = sorted(set(covered) - present)
    added = sorted(set(listing.read) - set(covered))
    sizes = binding.get("sizes") if isinstance(binding.get("sizes"), dict) else {}
    resized = sorted(
        n for n in covered if n in present and n in sizes and sizes[n] != (folder / n).stat().st_size
    )
    problems = []
    if missing:
        problems.append(f"missing from the model folder: {', '.join(missing)}")
    if added:
        problems.append(f"in the model folder but not covered by the OMS signature: {', '.join(added)}")
    if resized:
        problems.append(f"model file(s) differ from the OMS signature: {', '.join(resized)}")
    if problems:  # named before a byte is hashed: a changed size needs no hashing to be seen
        raise CheckFailed(f"{name}: " + "; ".join(shown_text(p) for p in problems))
    try:
        ms.verifying.Config().use_elliptic_key_verifier(public_key=str(pubkey)).set_ignore_unsigned_files(
            True
        ).verify(folder, factsheet_folder / name)
        verified = True
    except Exception:  # noqa: BLE001 - model-signing raises ValueError and others; named below by our hashing
        verified = False
    if not verified:
        files = _hash_files(folder, sorted(covered))
        changed = sorted(n for n in covered if files.get(n) != covered[n])
        if changed:  # named by our own hashing: model-signing's message carries machine paths and raw digests
            raise CheckFailed(f"{name}: model file(s) differ from the OMS signature: {', '.join(changed)}")
        raise CheckFailed(f"{name}: does not verify under the OMS public key")
    deployment = check_deployment(folder, sheet) if sheet is not None else []
    if deployment:
        raise CheckFailed("--model-folder: " + "; ".join(deployment))
    left = [n for n in listing.left_out if n not in covered]
    said = f"; left out (the engine does not read them): {', '.join(left)}" if left else ""
    return (
        f"OMS bundle {name} verifies on the model folder: {len(covered)} files the engine reads "
        f"({', '.join(sorted(covered))}), manifest sha256:{manifest}{shown_text(said)}"
    )
