"""The factsheet as a document: its model (schema), records files, versions, the headline, the predictor and
compliance sections and the output folder's file names. A leaf: it imports only the probes' and the tuner's
result types, never a builder, reader or outlet (import-linter contract in pyproject)."""
