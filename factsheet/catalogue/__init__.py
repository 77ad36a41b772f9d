"""`factsheet catalogue`: a static, offline site over every factsheet found under some folders — an index
row per build, a page per deployment with trend charts and diffs, incremental rebuilds (see site.py)."""
