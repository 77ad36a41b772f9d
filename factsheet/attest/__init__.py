"""Signed attestation of a factsheet, verifiable offline (see attestation.py).

Kept import-free: the build spec imports `factsheet.spec.sign`, and the attestation code imports the
factsheet schema, which imports the spec.
"""
