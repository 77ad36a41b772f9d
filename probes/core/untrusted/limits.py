"""The limits input from someone else is held to below the factsheet: the bounded parser's, the load probe's
(trace files, workload sizes, time) and the /metrics scraper's. `factsheet/untrusted/limits.py` adds the
factsheet's own on top of these (one rule set). Each value leaves wide headroom over honest runs and is
listed with why in the README's limits table; every refusal names the field and the limit, exit 2."""

from __future__ import annotations

KIB = 1024
MIB = 1024 * KIB

# JSON and YAML nesting depth. An honest factsheet nests 9 deep, a policy 5, a trace line 2; Python's JSON
# and YAML parsers (and pydantic after them) recurse once a level, so 100,000 levels crash them.
MAX_NESTING_DEPTH = 64

# Digits of an integer in a JSON document: every count and size the tool writes fits in 64 bits (20
# digits); a 400-digit integer becomes an infinite float and 5,000 digits cannot be converted at all.
MAX_INTEGER_DIGITS = 30

# Digits of an integer in a prompt file (HumanEval+, a user's JSONL): not figures, so test data may hold long
# ones (HumanEval+ has 33 digits); Python itself refuses to convert more than 4,300 (a crash before).
MAX_PROMPT_FILE_INTEGER_DIGITS = 4300

# A model folder's tokenizer_config.json, generation_config.json or chat template, read for the deployment's
# facts (probes/targets/deployment.py): one with a large added-token table is a few MiB.
MAX_MODEL_CONFIG_BYTES = 64 * MIB

# --- the load probe -------------------------------------------------------------------------------------

# Tokens of one prompt or one reply (input_len, output_len, a trace line's input/output_length, a
# profile's prefix/suffix/document/turn lengths, block_size). The longest context windows served today are
# ~1 M tokens; a prompt is built in memory as words (~6 bytes a token), so 10^12 was a MemoryError.
MAX_TOKENS = 1 << 20

# Requests of one load point (num_requests) and lines replayed from one trace. A request's raw record is
# ~1.4 KB at 64 output tokens, and validate reads a records file of at most 64 MiB (~45,000 such requests):
# 10^6 is what one records file could never hold anyway; 10^12 allocated a schedule of 8 TB before.
MAX_REQUESTS = 1_000_000

# Turns of one chat session (the default is 2 to 4; each turn resends the whole history).
MAX_SESSION_TURNS = 256

# One run's time: duration_s and the span of an open loop's schedule (a drawn one, or a trace's after
# time_scale). Honest sweeps run minutes and the published Mooncake traces span an hour; a day is 24 times
# that. A trace `0, 1e15` at time_scale 1e9, or `--request-rate 0.001` without a duration, ran until killed.
MAX_RUN_S = 24 * 3600.0

# One request, from its send to its last byte (and the longest silence, request_timeout_s): 1 M output tokens
# at 3 ms a token is under an hour. A server that never stops streaming ends as a failed request (timeout).
MAX_REQUEST_S = 3600.0

# A think time between two turns, ms (the default is 0; a minute is already long for a chatting user).
MAX_THINK_MS = 3_600_000.0

# time_scale of a trace: 0.001 replays a trace 1,000 times faster, 1,000 stretches it as much.
MAX_TIME_SCALE = 1000.0

# The trace file itself: read line by line (never whole), at most this many bytes and this long a line.
# A Mooncake line is ~0.3 KB (a few dozen hash_ids); one line of 450,000 ids took 81 s and 3.4 GB before.
MAX_TRACE_BYTES = 1024 * MIB
MAX_TRACE_LINE_BYTES = 64 * KIB
# hash_ids of one line: a line's prompt has at most input_length / block_size blocks; 4,096 ids is a
# 2 M-token prompt of 512-token blocks. Each id draws one block of words.
MAX_HASH_IDS = 4096

# --- the /metrics scraper --------------------------------------------------------------------------------

# One /metrics page: vLLM's is ~25 KB with one model (a few hundred series); 4 MiB is 160 times that.
# An endless page reached 3.6 GB before.
MAX_METRICS_PAGE_BYTES = 4 * MIB
# Time to read one page, connect to last byte: vLLM answers in milliseconds; a page sent at 1 byte/s hung
# the check before. A scrape past it is a failed scrape.
MAX_METRICS_READ_S = 10.0
# Series (sample lines) on one page: vLLM's has a few hundred; 10^6 took 2.7 GB and wrote a scrapes file of
# 148 MB (over validate's 64 MiB records limit). 20,000 keeps a scrapes file of a 10-minute run well under it.
MAX_METRICS_SERIES = 20_000
# Samples the server view keeps from one page (its families only): vLLM's page has ~50 (3 gauges, 3
# counters, 2 histograms of ~20 buckets) a model; 2,000 keeps the scrapes of an hour at 1 s under 64 MiB.
MAX_METRICS_KEPT_SAMPLES = 2_000
# Page bytes held by one run's scraper until the run is over (pages are parsed after the last response):
# 600 honest pages of 25 KB are 15 MB. A page past this total is a failed scrape.
MAX_METRICS_HELD_BYTES = 256 * MIB

# Characters of one piece of free text (a name, label or reason from the document) a page shows: the longest
# honest text is a library's error message kept as a reason (a few hundred characters); 4,096 is ten times
# that. Longer text is shown cut to this, saying how many characters are left out (the record, attached
# to the PDF, keeps it whole). WeasyPrint lays a long unbroken word out in time quadratic in its length: a
# 1 MB model name took 53 s to render, four of them (4.5 MB, under MAX_FACTSHEET_BYTES) over 115 s.
MAX_SHOWN_CHARS = 4096
