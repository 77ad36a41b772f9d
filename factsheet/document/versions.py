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


# What each minor of factsheet schema 1 added that `validate` relies on: a document of an older minor is held
# to the evidence its version could carry, and says so in validate's notes.
KEEPS_ENERGY_SAMPLES_AND_SEARCH = Version("1.1.0")  # energy.records, load.capacity.result.search
BINDS_RECORDS = Version("1.2.0")  # every raw-records file starts with its context's digest
KEEPS_PREDICTOR_RECORDS = Version("1.3.0")  # predictor.records: the campaign's measurements and their records
# 1.8.0: every load record carries `written_s` (before, only a worker's), and the open loop's client-bound rule
# reads the last byte too (achieved rate by written_s, write lag): an older document's verdicts are replayed
# by the rule it was judged by (sent_s alone), its last-byte figures, which it does not state, left aside.
JUDGES_BY_LAST_BYTE = Version("1.8.0")
# 1.3.0: each run's /metrics scrapes (`server_records`), its server view and saturation test; validate checks
# them whenever a document states them, so no version gate is needed.
# 1.6.0: each load run's host load (CPU of other processes and steal, from /proc): attested, optional, so no
# version gate is needed either.
# 1.6.0 also: `headline` (page 1's figures as data); validate recomputes it whenever a document states it, and
# readers of an older document compute it from the sheet, so no version gate is needed either.
# 1.6.0 also: a load point sent by several worker processes states its client check (`result.client`, attested: the
# loop lag is not in the records) and its records carry `worker` and `written_s`; nothing older changes.
# 1.7.0: the deployment's facts (chat template, generation defaults, system prompts' digests): optional, and
# validate checks a stated template text against its digest whenever a document states one, so no gate.
# 1.7.0 also: a load request's `sent_s` is stamped once its body is built and encoded (before, just before building it),
# so TTFT and E2EL no longer carry the client's building of the body; the records' fields are unchanged, and
# validate re-derives every figure from the records as stated, so no gate.

# 1.9.0: every run states its client check, a one-worker load point too (`result.client`, `workers` 1), and its
# capacity probes and repeats (`points[].client`), each stated and flagged beside the verdict, not judged by the
# pass rule (probes/load/capacity.py says why). validate recomputes each check from the records but for each
# worker's loop lag (not in the records, so attested, as the host's load is), and a run without one is a
# discrepancy (JUDGES_BY_CLIENT_CHECK). Before, a many-worker point's check was attested whole.
# 1.9.0 also: a rebuild interval is no narrower than its repeats' own within-run intervals allow, and a share's
# no higher than 1 (WIDENS_REBUILD, headline/rebuild.py): three repeats that agree by chance stated [0.941,
# 0.941] for an attainment, and a widely spread one stated an upper end of 1.08.

# 1.10.0: every load record states the length it asked for (`max_tokens`), the reply's `finish_reason` and its
# `outcome` (completed, truncated, failed: probes/load/records.OUTCOME_RULE); a truncated reply counts in no
# latency, throughput, goodput or capacity pass. validate re-derives every outcome from its record, and a record
# without one is a discrepancy (JUDGES_REPLIES). Output tokens name their source (usage, tokenizer, chunks);
# total_input_tokens is None, never 0, where the server did not count every prompt.
# 1.10.0 also: the capacity search's rule is a search parameter (`search.rule`: probes/load/capacity.py
# SEARCH_METHODS): validate replays whichever rule a document states, so no gate; one without it ran "capped".
JUDGES_REPLIES = Version("1.10.0")
# 1.10.0 also: a policy's `load.points[headline].result.metrics…` is the run page 1 states (the capacity's last
# confirmation run when there is one; factsheet.compliance.paths.page_one_path), one headline for page 1 and
# every gate; an older document's gate judged the headline load point, and its re-check still does.
GATES_PAGE_ONE = Version("1.10.0")
# 1.10.0 also: the conformance section (the serving engine found, its version, the model id sent, each preflight
# check's verdict: probes/targets/conformance.py), attested and optional; a local endpoint's server process is
# found by its port and its CPU stated as the server's (host_load.server), no longer under other processes; the
# server view reads SGLang's, TGI's and llama.cpp's /metrics names (a vLLM page's figures keep their words).
# Nothing older changes meaning, so no gate.

# 1.10.0 also: every records header names the schema of the tool that wrote it (`schema_version`), and every
# load record states its outcome, which no older tool wrote: a document whose version is lower than its
# records' writer's was relabelled (validate names `schema_version`), so a version is lowered only by the tool
# that wrote it. 1.9.0's records are 1.8.0's in shape (1.9.0 added only the client checks a relabel drops):
# a 1.9.0 build relabelled 1.8.0 is told apart by a signature only (docs/limits.md).
WRITER_IN_HEADER = Version("1.10.0")
# 1.10.0 also: each capacity step's (and repeat's) context binds the repeats its build asked for (`repeats`, 1:
# none), read from the document by JUDGES_REPLIES' gate: repeats left out with their files deleted mismatch
# every step of the search (factsheet/rederive/load.py, asked_repeats).

SETTLES_ON_REPEATS = Version("1.8.0")  # the capacity's answer applies its repeats (REPEATS_RULE)
FLOORS_REBUILD = Version("1.8.0")  # a rebuild interval's lower end is no less than 0 (headline/rebuild.py)
JUDGES_BY_CLIENT_CHECK = Version("1.9.0")  # every run states its client check, recomputed but for the lag
WIDENS_REBUILD = Version(
    "1.9.0"
)  # ... no narrower than its runs' own intervals, a share's at most 1 (rebuild.py)


def at_least(stated: str, version: Version) -> bool:
    """Whether a document of schema `stated` (already checked readable) is at `version` or newer."""
    return parse(stated) >= version


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
