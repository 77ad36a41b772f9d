"""The one jinja2 environment every document renders through, its filters, and the shared stylesheet.

Templates and the stylesheet are package data (templates/ in the repository, `factsheet.templates` when
installed). The factsheet, the compliance report and the diff all come through `page`, so they share the
filters, the strict undefined handling and the CSS.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from functools import cache

import jinja2
from markupsafe import Markup
from pydantic import BaseModel

from factsheet.export.text import shown_text
from factsheet.render.reviewer import MARKS
from factsheet.resources import TEMPLATES, data_file
from probes.core.measurement import MISSING, NotMeasured
from probes.load.stats import VERDICT_NAMES

CSS_FILE = "factsheet.css"  # the one stylesheet of every document


def page(template: str, **context: object) -> str:
    """The HTML of `template` (a file under templates/) with `context`, the stylesheet inline as `css`."""
    css = Markup(data_file(TEMPLATES, CSS_FILE).read_text(encoding="utf-8"))  # our own file: trusted
    return environment().get_template(template).render(css=css, **context)


@cache
def environment() -> jinja2.Environment:
    """The shared environment: autoescaped, strict about undefined names, with the number filters."""
    data_file(TEMPLATES, CSS_FILE)  # a broken install says so in one line, before jinja2 would
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(TEMPLATES, "."),  # package data: works from a wheel, a zip or a checkout
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )
    env.filters.update(num=fmt_num, pct=fmt_pct, sig=fmt_sig, utc=fmt_epoch, fields=fields, label=label,
                       digest_start=digest_start)  # fmt: skip
    env.globals["verdict_names"] = VERDICT_NAMES
    env.globals["marks"] = MARKS
    env.tests.update(
        not_measured=lambda v: isinstance(v, NotMeasured), model=lambda v: isinstance(v, BaseModel)
    )
    return env


def _shown(value: object) -> object:
    """Every `{{ ... }}` of every page: text (not our own Markup: charts, the stylesheet) through the one
    escaping rule of factsheet/export/text.py before autoescape: control and bidi characters shown as code
    points, long text cut saying by how much (a 1 MB name took WeasyPrint 53 s to lay out)."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return shown_text(value)
    return value


def fmt_num(value: float | int | None, digits: int = 1) -> str:
    """Fixed decimals with thousands separators; '—' for a figure that does not exist."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return f"{value:,.{digits}f}"


DIGEST_SHOWN = 12  # hex digits a listing shows of a digest (whole in the HTML's title and in factsheet.json)


def digest_start(digest: str) -> str:
    """A digest's first DIGEST_SHOWN hex digits, for a listing whose header names the algorithm."""
    return f"{digest.rpartition(':')[2][:DIGEST_SHOWN]}…"


def fmt_pct(value: float | None, digits: int = 1) -> str:
    return MISSING if value is None else f"{100 * value:.{digits}f} %"


def fmt_sig(value: float | int | None, digits: int = 4) -> str:
    """Significant digits, for figures whose magnitude varies (energy, rates, generic numbers)."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def fmt_epoch(seconds: float | None) -> str:
    if seconds is None:
        return MISSING
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def fields(model: BaseModel) -> list[tuple[str, object]]:
    """A model's serialised fields in declaration order (excluded fields stay out, as in the JSON)."""
    return [
        (name, getattr(model, name)) for name, info in type(model).model_fields.items() if not info.exclude
    ]


def label(name: str) -> str:
    """A field name as words ('slo_attainment' -> 'slo attainment')."""
    return name.replace("_", " ")
