"""Ed25519 signing keys: PEM files written by `factsheet keygen`, loaded for signing and verifying.

The key id is securesystemslib's default (sha256 of the canonical public-key dict), the id in-toto
and TUF tooling compute for the same key, so a verifier can match it without our code.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes, PublicKeyTypes
from securesystemslib.signer import SSlibKey

from factsheet.untrusted.limits import MAX_KEY_BYTES
from factsheet.untrusted.reading import read_given
from probes.core.errors import InputError

PRIVATE_NAME = "factsheet-signing.key"
PUBLIC_NAME = "factsheet-signing.pub"


class KeyFileError(InputError):
    """A key file that cannot be read or is not an Ed25519 key."""


def key_id(public: Ed25519PublicKey) -> str:
    return SSlibKey.from_crypto(public).keyid


def generate(folder: Path) -> tuple[Path, Path, str]:
    """Write a new key pair into `folder`: the private key 0600 (created so, never world-readable
    even for an instant), the public key 0644. Never overwrites a key."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise KeyFileError(f"{folder}: exists and is not a folder")
    private_path, public_path = folder / PRIVATE_NAME, folder / PUBLIC_NAME
    for path in (private_path, public_path):
        if path.exists():
            raise KeyFileError(f"{path}: already exists (a key is never overwritten)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KeyFileError(f"{folder}: cannot create: {exc.strerror}") from exc
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    os.chmod(private_path, 0o600)  # the umask can only remove bits; make the mode exact
    public = private.public_key()
    public_path.write_bytes(
        public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private_path, public_path, key_id(public)


def read_key(path: Path, what: str) -> bytes:
    try:  # a regular file within the limit: a public key may come with the factsheet, from its author
        return read_given(Path(path), MAX_KEY_BYTES, what)
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read {what}: {exc.strerror}") from exc


def load_pem(path: Path, what: str, *, private: bool) -> PrivateKeyTypes | PublicKeyTypes:
    """The one PEM reader for every key the tool takes (the Ed25519 signing key, the OMS EC key): the file read
    within its limit, parsed by `cryptography`'s own loaders; a bad key is one line naming the file (exit 2).
    The caller checks the key's type."""
    data = read_key(path, what)
    try:
        if private:
            return serialization.load_pem_private_key(data, password=None)
        return serialization.load_pem_public_key(data)
    except TypeError as exc:  # an encrypted PEM (a password is never asked for)
        raise KeyFileError(f"{path}: encrypted private keys are not supported ({exc})") from exc
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path}: not a PEM {what} ({first_line(exc)})") from exc


def load_private(path: Path) -> Ed25519PrivateKey:
    key = load_pem(path, "private key", private=True)
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: not an Ed25519 private key ({type(key).__name__})")
    return key


def load_public(path: Path) -> Ed25519PublicKey:
    key = load_pem(path, "public key", private=False)
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{path}: not an Ed25519 public key ({type(key).__name__})")
    return key


def first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
