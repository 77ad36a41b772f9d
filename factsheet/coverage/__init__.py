"""Which items of the EU GPAI Code of Practice's Model Documentation Form and of AI Act Annex XI §1 a
factsheet documents (coverage.py; the matrix itself is package data, gpai-documentation.json)."""
