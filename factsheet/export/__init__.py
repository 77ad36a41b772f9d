"""Exports of a factsheet for model registries: a Hugging Face model card, a CycloneDX 1.6 BOM with a
model card, an SPDX 3.0.1 AI package. Each names the digest of the factsheet it came from and carries
only measured figures (figures.py is the one place that decides which)."""
