"""The headline: page 1's figures as typed data, each with its value, interval, n, sufficiency verdict, the
JSON pointer of the run it comes from and the rule that chose it (`factsheet.document.headline.figures.headline`).

One home for the choice of what page 1 states: page 1 (`factsheet.render.glance`), `validate` (which recomputes
it from the rest of the sheet), `export` and `publish` all read it from here. This module imports nothing
so that the schema can hold the model (`factsheet.document.headline_model`) without a cycle.
"""
