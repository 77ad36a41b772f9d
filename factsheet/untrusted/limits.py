"""Every limit a hostile input is held to, in one place (README "What `factsheet validate` guarantees").

A factsheet, its raw records, its attestation and a policy may come from someone else, so each is
checked against these sizes *before* it is parsed: the refusal is one line and exit 2, in milliseconds and
a few megabytes, whatever the input. Each value leaves wide headroom over honest builds, measured on a
build against the mock server with the demo's shape (`models/smollm2-cpu.yaml`: 3 load points, a capacity
search of 3 probes and a 500-request confirmation, 64 output tokens a request) and on the built-in policy
profiles; each is also small enough that the attacks of issue 20 are refused fast.
"""

from __future__ import annotations

# The parser's own limits (nesting depth, integer digits) and the probes' are in the layer below, shared.
from probes.core.untrusted.limits import KIB, MAX_INTEGER_DIGITS, MAX_NESTING_DEPTH, MAX_SHOWN_CHARS, MIB

__all__ = [
    "KIB",
    "MAX_INTEGER_DIGITS",
    "MAX_NESTING_DEPTH",
    "MAX_SHOWN_CHARS",
    "MIB",
]  # and the factsheet's own below

# factsheet.json. The demo-shaped build writes 88 KB (one load point is ~10 KB, the capacity section
# ~38 KB); 8 MiB holds ~90 times that. Rendering time grows with the document, so it stays bounded.
MAX_FACTSHEET_BYTES = 8 * MIB

# Load points in one factsheet: the demo has 3, a wide sweep a few dozen. 200 points took 48 s and
# 0.8 GB to render; 64 keeps a render (one chart set a point) to a fraction of that.
MAX_LOAD_POINTS = 64

# Probed points of a capacity search (probes and confirmations): the default budget is 8, the demo uses 6.
MAX_CAPACITY_POINTS = 64

# One raw-records file. A 500-request run with 64 output tokens a request is 0.7 MB (1.4 KB a
# request, mostly token timestamps); 64 MiB holds ~45,000 such requests, or ~3,000 of 1,024 tokens.
# Validating costs ~6.5 times the file in memory (a 200 MB file took 1.3 GB), so ~420 MB at most.
MAX_RECORDS_FILE_BYTES = 64 * MIB

# All raw-records files of one factsheet together (the demo's: 1.6 MB). Files are read one at a time,
# so this bounds the time of a validate, not its memory.
MAX_RECORDS_TOTAL_BYTES = 256 * MIB

# A file a signature covers (factsheet.json, HTML, PDF, raw records), hashed in blocks: the demo's PDF is
# 100 KB, its largest records file 0.7 MB. The records limit covers them all.
MAX_SIGNED_FILE_BYTES = MAX_RECORDS_FILE_BYTES

# factsheet.intoto.jsonl: one envelope is ~2 KB (a statement over a dozen files, base64); 1 MiB holds
# hundreds of envelopes (one a signer). /dev/zero behind it wrote 24 GB in 20 s before.
MAX_ATTESTATION_BYTES = 1 * MIB

# A policy file (YAML): the largest built-in profile is 7.8 KB with 16 rules. 256 KiB is 30 times that.
MAX_POLICY_BYTES = 256 * KIB

# Rules of one policy with everything it extends, and YAML nodes after aliases are expanded (an alias
# repeats a whole subtree: a few lines of anchors can stand for billions of nodes). Each rule costs ~0.1 s
# in `factsheet check` (evaluation and the report's rows); a 0.5 MB policy of 2,400 rules took > 120 s
# and 2.2 GB. 128 rules is 8 times the largest built-in profile; 100,000 nodes 300 times its 328.
MAX_POLICY_RULES = 128
# Policies one check or one build's gate applies (each named by a -p or listed in the spec): the built-in
# profiles are 3; a summary naming more is re-run only up to this.
MAX_POLICIES = 16
MAX_YAML_NODES = 100_000

# Digits of an `[N]` index in a policy's field path: a list of the factsheet is at most a few hundred items
# long (3 digits); Python refuses to convert more than 4,300 digits to an int (ValueError, a crash before).
MAX_INDEX_DIGITS = 6

# A PEM key file (an Ed25519 key is ~120 bytes) and a compliance report given to `sign --compliance`
# (the demo's compliance.json is ~20 KB): a public key may come with the factsheet, from its author.
MAX_KEY_BYTES = 64 * KIB
MAX_COMPLIANCE_REPORT_BYTES = 8 * MIB

# One response body from an MLflow tracking server (`publish`): its JSON answers to the few calls publish
# makes (an experiment, one run found by digest, a model version, an artifact listing of a dozen files) are
# a few KB; 16 MiB is thousands of times that. An endless body took 3.6 GB before (a redirect's, read by requests
# before following it, too); now it is cut off at this
# size, and a body still arriving after MAX_MLFLOW_RESPONSE_S (one at 1 byte/s never hits a socket timeout)
# is cut off by time.
MAX_MLFLOW_RESPONSE_BYTES = 16 * MIB
MAX_MLFLOW_RESPONSE_S = 60.0


# Pairs of consecutive builds of one deployment the catalogue diffs in one run, the newest first; older pairs
# are listed as not compared, saying why. A diff re-derives both builds and bootstraps their records (~0.25 s
# for a demo-sized build), and nothing is reused from an earlier run (the site is output, never input):
# 500 builds of one deployment took > 115 s and 745 MB when every pair was diffed. 32 pairs is months of
# weekly builds, a few seconds of diffs.
MAX_DIFFS_PER_DEPLOYMENT = 32
