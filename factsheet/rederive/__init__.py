"""Re-derivation: every figure the raw records determine, recomputed by the probes' own functions and
compared with what the factsheet states (`factsheet validate`, and `factsheet verify` after the signature)."""

from factsheet.rederive.compare import TOLERANCE, Discrepancy
from factsheet.rederive.sheet import Rederivation, rederivation, rederive

__all__ = ["TOLERANCE", "Discrepancy", "Rederivation", "rederivation", "rederive"]
