"""The names of the files a build, a check and a diff write into their output folder: defined once here.

Every writer and every reader (render, the compliance gate, checkpoints, signing, publishing, the catalogue,
the CLI's messages) takes its names from this module, so a renamed document cannot leave a reader behind.
"""

from __future__ import annotations

# A factsheet: its JSON (the document of record), and its renderings of the same content.
FACTSHEET_JSON = "factsheet.json"
FACTSHEET_HTML = "factsheet.html"
FACTSHEET_PDF = "factsheet.pdf"
RENDERINGS = (FACTSHEET_PDF, FACTSHEET_HTML)  # in this order in a signature's subjects since 1.0
# The signature beside a factsheet's JSON, `<stem>.intoto.jsonl` (an in-toto statement in a DSSE envelope,
# one JSON a line: the in-toto bundle convention).
ATTESTATION_SUFFIX = ".intoto.jsonl"
ATTESTATION = FACTSHEET_JSON.removesuffix(".json") + ATTESTATION_SUFFIX
# The standard predicates (in-toto Test Result, eval results), one DSSE envelope a line, covered by the
# attestation as a subject: `<stem>.results.intoto.jsonl` (factsheet/attest/predicates.py).
RESULTS_SUFFIX = ".results" + ATTESTATION_SUFFIX
# Folders of a build's output: raw records (one file per measurement) and checkpoints for --resume.
RECORDS_DIR = "records"
MEASUREMENTS_DIR = "measurements"
# The predictor's campaign as the factsheet keeps it (under RECORDS_DIR): one measurement a line.
PREDICTOR_RECORDS = "predictor-campaign.jsonl"
# A run's /metrics scrapes sit beside its request records: `<records stem><suffix>`.
SCRAPES_SUFFIX = "-metrics.jsonl"
# `probe load`'s /metrics scrapes, beside its result.json and records.jsonl.
PROBE_SCRAPES = "scrapes.jsonl"
BUILD_OUTPUTS = (FACTSHEET_JSON, FACTSHEET_HTML, FACTSHEET_PDF, RECORDS_DIR, MEASUREMENTS_DIR)

# The compliance report of `check` (and of a gated build): `<stem><suffix>`; a factsheet's compliance summary
# names its report's JSON, whose siblings share its stem.
COMPLIANCE_STEM = "compliance"
COMPLIANCE_SUFFIXES = (".json", ".html", ".pdf", "-junit.xml")
COMPLIANCE_FILES = tuple(COMPLIANCE_STEM + suffix for suffix in COMPLIANCE_SUFFIXES)
COMPLIANCE_JSON, COMPLIANCE_HTML, COMPLIANCE_PDF, COMPLIANCE_JUNIT = COMPLIANCE_FILES

# The report of `diff`.
DIFF_JSON = "diff.json"
DIFF_MARKDOWN = "diff.md"
DIFF_HTML = "diff.html"
DIFF_FILES = (DIFF_JSON, DIFF_MARKDOWN, DIFF_HTML)

# Where a build writes when neither -o nor the spec's `output_dir` says: `<BUILD_ROOT>/<spec name>`.
BUILD_ROOT = "out"

# The output of `factsheet probe load`: a folder holding the point's result and its raw records.
PROBE_LOAD_DIR = "probe-load"
PROBE_RESULT_JSON = "result.json"
PROBE_RECORDS = "records.jsonl"
