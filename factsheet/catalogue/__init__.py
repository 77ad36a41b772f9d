"""`factsheet catalogue`: a static, offline site over every factsheet found under some folders — an index
row per build, a page per deployment with trend charts and diffs, incremental rebuilds (see site.py)."""

from factsheet.catalogue.site import CatalogueError, CatalogueResult, build_catalogue

__all__ = ["CatalogueError", "CatalogueResult", "build_catalogue"]
