"""Schema versions (semver) of factsheets and build specs, and which ones this tool reads.

A minor version only adds (optional fields, new figures): a document of an older minor of the same major
validates unchanged. A newer minor may carry fields this tool does not know, and a newer major changed the
meaning or shape of something: both are refused with the reason, never validated half-understood. An older
major would need `factsheet migrate` (none exists: 1 is the first major).
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from probes.core.errors import InputError


class SchemaVersionError(InputError):
    """A document whose schema version this tool cannot read (names the versions and what to do)."""


def parse(text: object, what: str = "schema_version") -> Version:
    """`packaging`'s reading of `text`, held to semver's MAJOR.MINOR.PATCH: packaging also reads "v1.2",
    "1.02.0", "1.2.0rc1" or "1.2.0+x", none of which a factsheet states, so its plain release (no pre, post, dev or local part) must be the text."""
    try:
        version = Version(text) if isinstance(text, str) else None
    except InvalidVersion:
        version = None
    if version is None or len(version.release) != 3 or version.base_version != text:
        raise SchemaVersionError(f"{what}: {text!r} is not a semantic version (MAJOR.MINOR.PATCH)")
    return version


# What each minor of factsheet schema 1 changed in how a document is judged is a rule of the registry
# (factsheet/document/rules): a document is held to the rules of its version.


def same_major_pattern(current: str) -> str:
    """JSON Schema pattern of every version a `current` tool reads: any minor and patch of its major."""
    return rf"^{parse(current).major}\.(0|[1-9]\d*)\.(0|[1-9]\d*)$"


def check_readable(stated: object, current: str, *, document: str = "factsheet", tool: str = "") -> Version:
    """The stated version when this tool (schema `current`) reads it; else SchemaVersionError saying why."""
    version, mine = parse(stated, f"{document} schema_version"), parse(current)
    by = f"this tool{f' ({tool})' if tool else ''} reads schema {mine.major}.x up to {mine}"
    if version.major > mine.major:
        raise SchemaVersionError(
            f"{document} schema {version} is a newer major version than {by}: its fields may mean something "
            "else; use a newer llm-factsheet (pip install -U llm-factsheet)"
        )
    if version.major < mine.major:
        raise SchemaVersionError(
            f"{document} schema {version} is an older major version than {by}: run `factsheet migrate` "
            "with a tool that has a migration from it, or validate it with the tool that wrote it"
        )
    if version.minor > mine.minor:
        raise SchemaVersionError(
            f"{document} schema {version} is newer than {by}: it may hold fields this tool cannot check; "
            "use a newer llm-factsheet (pip install -U llm-factsheet)"
        )
    return version
