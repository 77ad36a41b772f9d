"""The shared vocabulary of the whole tool, one import path per name.

Every package (probes, tuner, factsheet) builds on these and nothing here imports back up:

- `probes.core.errors`: the one error tree (`InputError` → exit 2, `CheckFailed` → exit 1);
- `probes.core.files`: the one way a file is written (atomic, durable, put off a stop while a set is written);
- `probes.core.digests`: the one `"sha256:<hex>"` digest of bytes, files and structured things;
- `probes.core.documents`: YAML documents read into pydantic models with one-line errors;
- `probes.core.measurement`: `Model`, `NotMeasured`, distributions and their percentile method;
- `probes.core.progress`: how a long measurement reports progress without knowing how it is shown;
- `probes.core.records_header`: the first line of a raw-records file and finite JSON numbers in records.

It lives under `probes/` because imports point one way (factsheet → tuner → probes): the lowest package
is the only one every other can import. Nothing is re-exported from this `__init__`.
"""
