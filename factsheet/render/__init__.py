"""One document renderer: the factsheet, the compliance report and the diff all render through here.

The public API (import it from `factsheet.render`, never from the modules below):

- `page(template, **context)`: any document's HTML from templates/ (package data), through the one jinja2
  environment with its filters, the shared stylesheet inline;
- `pdf_bytes(html, record, name=..., description=...)`: the archival PDF/A-3u of that HTML with its JSON
  record attached (`render_pdf` writes one alone);
- `check_folder(out_dir)` and `write_set(files)`: a document's files written atomically as one group
  (`probes.core.files.together`), after everything is rendered;
- `line_chart`, `scatter_chart` (with `Series`, `Points`, `Chart`): hand-built inline SVG charts, for any
  document (the catalogue's pages draw theirs with them);
- the factsheet itself: `render_html`, `render_all`, `json_to_attach`, `Integrity`, `SECTIONS`.

File names come only from `factsheet.document.files`. The modules split the work by job: `environment` (jinja2,
filters, CSS), `view` (what a section shows), `charts` (SVG drawing), `sheet_charts` (the factsheet's
figures), `section_pictures` (energy, tuning, predictor), `pdf` (the PDF/A writer, on `factsheet.render.pdfa`), `files` (writing a set), `sheet` (the factsheet).
"""

from __future__ import annotations

from factsheet.render.charts import Chart, Points, Series, line_chart, scatter_chart
from factsheet.render.environment import CSS_FILE, page
from factsheet.render.files import RenderError, check_folder, write_set
from factsheet.render.pdf import pdf_bytes, render_pdf
from factsheet.render.section_pictures import energy_picture, predictor_pictures, tuning_pictures
from factsheet.render.sheet import SECTIONS, Integrity, json_to_attach, render_all, render_html
from factsheet.render.sheet_charts import figures, load_charts
from factsheet.render.view import view

__all__ = [
    "CSS_FILE",
    "SECTIONS",
    "Chart",
    "Integrity",
    "Points",
    "RenderError",
    "Series",
    "check_folder",
    "energy_picture",
    "figures",
    "json_to_attach",
    "line_chart",
    "load_charts",
    "page",
    "pdf_bytes",
    "predictor_pictures",
    "render_all",
    "render_html",
    "render_pdf",
    "scatter_chart",
    "tuning_pictures",
    "view",
    "write_set",
]
