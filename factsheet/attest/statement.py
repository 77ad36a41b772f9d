"""The in-toto Statement v1 a factsheet is attested with: its files as subjects, what produced them
as the predicate."""

from __future__ import annotations

import hashlib
from pathlib import Path

from factsheet.compliance.verdict import ComplianceVerdict
from factsheet.document.files import RENDERINGS
from factsheet.document.schema import Factsheet
from factsheet.document.stamp import tool_version, utc_now
from factsheet.untrusted.limits import MAX_SIGNED_FILE_BYTES
from factsheet.untrusted.reading import hash_confined
from probes.core.digests import bare

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://llm-factsheet.dev/attestation/factsheet/v1"


def file_sha256(folder: Path, name: str) -> str:
    """Hex digest (in-toto's DigestSet form, no 'sha256:' prefix) of `name` in `folder`, read in blocks.

    A signed file must really be in the folder: a name leading outside, a symlink anywhere on the way
    (even to an identical copy) or anything but a regular file within the size limit is refused (exit 2),
    so a signature never covers, nor verifies, a file elsewhere on the signer's or verifier's disk."""
    h = hashlib.sha256()
    hash_confined(folder, name, MAX_SIGNED_FILE_BYTES, "signed file", h)
    return h.hexdigest()


def subject_names(sheet: Factsheet, json_name: str) -> list[str]:
    """Paths relative to the factsheet's folder: the JSON, its renderings, every raw-records file."""
    return [json_name, *RENDERINGS, *(rec.path for _, rec in sheet.records_files())]


def statement(
    sheet: Factsheet,
    folder: Path,
    json_name: str,
    compliance: ComplianceVerdict | None = None,
    results: dict | None = None,
    oms: dict | None = None,
    plan: dict | None = None,
    compliance_run: dict | None = None,
) -> dict:
    """`results`: the results bundle's binding (its name, digest and each line's digest; signed before this
    statement), carried in the predicate (the subjects stay the factsheet's own files, as since 1.0)."""
    subjects = [
        {"name": name, "digest": {"sha256": file_sha256(folder, name)}}
        for name in subject_names(sheet, json_name)
    ]
    prov = sheet.provenance
    predicate: dict = {
        "factsheet": {"name": sheet.name, "kind": sheet.kind, "schemaVersion": sheet.schema_version},
        "tool": {"name": prov.tool, "version": tool_version(), "buildVersion": prov.tool_version},
        "spec": {"file": prov.spec_file, "digest": {"sha256": bare(prov.spec_sha256)}},
        "signedAt": utc_now(),
    }
    if compliance is not None:
        predicate["compliance"] = compliance.model_dump(mode="json", by_alias=True)
    if compliance_run is not None:  # the policies as applied that give the verdict, for verify to re-run
        predicate["complianceRun"] = compliance_run
    if results is not None:
        predicate["results"] = results
    if oms is not None:  # the OMS bundle of the served weights: its digest, the manifest's, each file's
        predicate["oms"] = oms
    if plan is not None:  # the pre-registered gate (attest/plan.py): its file, digest and time
        predicate["plan"] = plan
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    }
