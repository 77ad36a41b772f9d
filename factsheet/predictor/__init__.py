"""The factsheet's predictor section (issue 12, typed in schema 1.3.0): the spec's `predictor:` section
(`spec`), the section's models with units and definitions (`section`), and the one call that builds it from a
campaign (`build`). The shared spec and schema modules import `PredictorSpec`, `PredictorSection` and
`build_predictor` from here."""

from factsheet.predictor.build import build_predictor
from factsheet.predictor.section import PredictorSection
from factsheet.predictor.spec import PredictorSpec, parse_constraints

__all__ = ["PredictorSection", "PredictorSpec", "build_predictor", "parse_constraints"]
