"""The site's pages: an index with one row per build, and a page per deployment with trend charts (the
project's SVG charts, each with a caption and a data table as its text alternative) and links to every
document. Written from this run's manifest (made afresh from the sources; an earlier site is never read). A build
whose figures do not re-derive from its raw records is marked wherever it is listed.

Pages are plain HTML tables first; the small script (package data, copied into the site) only adds sorting
and filtering. Nothing is fetched at view time: CSS and JS are files in the site, charts are inline SVG."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from jinja2 import Environment, FunctionLoader, StrictUndefined
from markupsafe import Markup

from factsheet.catalogue.folders import own_folder
from factsheet.catalogue.manifest import DiffEntry, Entry, Manifest
from factsheet.catalogue.rows import DIFF_FIGURE, FIGURE_KEYS, FIGURE_TITLES, FigureKey, HeadlineFigure
from factsheet.document import files as o
from factsheet.document.stamp import tool_version, utc_now
from factsheet.export.text import shown_text
from factsheet.render import Series, line_chart
from factsheet.resources import data_file
from probes.core.files import write_atomic
from probes.core.measurement import MISSING

PACKAGE = "factsheet.catalogue"
ASSETS = ("catalogue.css", "catalogue.js")
# The documents of a build in the site: the JSON as read, the pages rendered here from it (never the author's
# own HTML or PDF), the attestation and the compliance report's JSON as read. No PDF: rendering one is seconds
# a build, and every build is rendered afresh on every run.
DOCUMENT_LABELS = {
    o.FACTSHEET_HTML: "HTML",
    o.FACTSHEET_JSON: "JSON",
    o.ATTESTATION: "attestation",
    o.COMPLIANCE_HTML: "compliance report",
    o.COMPLIANCE_JSON: "compliance JSON",
}
UNSUPPORTED = "does not re-derive"
_COLORS = {
    "capacity": "#1f5fa8",
    "e2el_p99": "#a8411f",
    "goodput": "#2e7d32",
    "pass_at_1": "#6a1b9a",
    "energy_per_1000": "#8d6e00",
}


@dataclass(frozen=True)
class Cell:
    text: str
    interval: str
    sort: str  # the exact value (repr), or '' when there is none: sorting and tests read it
    note: str = ""


@dataclass(frozen=True)
class Link:
    label: str
    href: str


@dataclass(frozen=True)
class BuildView:
    entry: Entry
    number: int  # 1 = the deployment's oldest build
    cells: dict[str, Cell]
    links: list[Link]
    deployment_href: str


@dataclass(frozen=True)
class TrendPoint:
    build: BuildView
    cell: Cell
    changed: bool
    diff: Link | None


@dataclass(frozen=True)
class Trend:
    key: str
    title: str
    unit: str
    svg: Markup | None
    alt: str
    points: list[TrendPoint]
    compared: bool  # whether `factsheet diff` compares this figure


def page_name(deployment_id: str) -> str:
    """A deployment's page: named by the full digest of its identity (rows.deployment_id)."""
    return f"{deployment_id}.html"


def _shown(value: object) -> object:
    """Text from a factsheet shown, never sent (control and bidi characters as code points, long text cut),
    as on the factsheet's own pages."""
    return shown_text(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def _env() -> Environment:
    def load(name: str) -> str:
        return data_file(PACKAGE, name).read_text(encoding="utf-8")

    return Environment(
        loader=FunctionLoader(load), autoescape=True, undefined=StrictUndefined, finalize=_shown
    )


def unsupported_banner(reason: str) -> Markup:
    """The banner on a build's page whose figures do not re-derive (escaped: the reason quotes the sheet)."""
    return Markup(_env().from_string(_BANNER).render(reason=reason))


_BANNER = (
    '<p role="alert" style="border:3px solid #a8411f;padding:.5em;margin:0;background:#fff4f0">'
    "<strong>This build's figures do not re-derive from its raw records</strong> ({{ reason }}). "
    "The catalogue shows it as it was found; it is not evidence of what it states.</p>"
)


def cell(f: HeadlineFigure, key: FigureKey, rederives: bool = True) -> Cell:
    if not rederives:
        plain = cell(f, key)
        text = f"{plain.text} ({UNSUPPORTED})" if plain.sort else plain.text
        return Cell(text, plain.interval, plain.sort, plain.note)
    if f.value is None:
        return Cell("not measured", "", "", f.missing or "")
    bounds = ""
    if f.lower is not None or f.upper is not None:
        lo = MISSING if f.lower is None else _num(f.lower, key)
        hi = MISSING if f.upper is None else _num(f.upper, key)
        bounds = f"[{lo}, {hi}{')' if key == 'capacity' else ']'}"
    unit = "" if key == "pass_at_1" else f" {f.unit}"
    at_least = "≥ " if f.lower_bound else ""  # a lower bound reads as one, as on page 1
    note = "; ".join(x for x in (f.interval, f.verdict) if x)
    return Cell(f"{at_least}{_num(f.value, key)}{unit}", bounds, repr(f.value), note)


def _num(v: float, key: FigureKey) -> str:
    if key == "pass_at_1":
        return f"{v:.1%}"
    if key == "capacity":
        return f"{v:g}"
    if key == "e2el_p99":
        return f"{v:,.1f}"
    return f"{v:.4g}"


def _links(entry: Entry, prefix: str) -> list[Link]:
    return [
        Link(DOCUMENT_LABELS[n], f"{prefix}{entry.folder}/{n}")
        for n in DOCUMENT_LABELS
        if n in entry.documents
    ]


def _views(manifest: Manifest, prefix: str) -> dict[str, list[BuildView]]:
    """Each deployment's builds, oldest first, by deployment_id."""
    groups: dict[str, list[Entry]] = {}
    for e in manifest.entries.values():
        groups.setdefault(e.row.deployment_id, []).append(e)
    out = {}
    for dep, entries in sorted(groups.items(), key=lambda g: (g[1][0].row.deployment, g[0])):
        entries.sort(key=lambda e: (e.row.date, e.row.sha256))
        href = f"{'' if prefix else 'deployments/'}{page_name(dep)}"
        out[dep] = [
            BuildView(
                e,
                i + 1,
                {k: cell(e.row.figures[k], k, e.row.rederives) for k in FIGURE_KEYS},
                _links(e, prefix),
                href,
            )
            for i, e in enumerate(entries)
        ]
    return out


def write_pages(site: Path, manifest: Manifest) -> Path:
    env = _env()
    assets = own_folder(site, "assets")
    for name in ASSETS:
        write_atomic(assets / name, data_file(PACKAGE, name).read_bytes())
    generated = {"at": utc_now(), "tool_version": tool_version()}
    by_dep = _views(manifest, "")
    rows = sorted(
        (v for views in by_dep.values() for v in views), key=lambda v: v.entry.row.date, reverse=True
    )
    index = site / "index.html"
    html = env.get_template("index.html.j2").render(
        rows=rows, titles=FIGURE_TITLES, keys=FIGURE_KEYS, deployments=len(by_dep), generated=generated
    )
    write_atomic(index, html.encode())
    pages = own_folder(site, "deployments")
    for dep, views in _views(manifest, "../").items():
        trends = [_trend(k, views, manifest.diffs) for k in FIGURE_KEYS]
        page = env.get_template("deployment.html.j2").render(
            deployment=views[0].entry.row.deployment, builds=views, trends=trends, titles=FIGURE_TITLES, keys=FIGURE_KEYS,
            diffs=_pair_links(views, manifest.diffs), generated=generated,
        )  # fmt: skip
        write_atomic(pages / page_name(dep), page.encode())
    _remove_stale_pages(pages, {page_name(d) for d in by_dep})
    return index


def _diff_of(older: BuildView, newer: BuildView, diffs: dict[str, DiffEntry]) -> DiffEntry | None:
    return diffs.get(DiffEntry.key(older.entry.row.sha256, newer.entry.row.sha256))


def _pair_links(
    views: list[BuildView], diffs: dict[str, DiffEntry]
) -> list[tuple[BuildView, BuildView, DiffEntry]]:
    return [(a, b, d) for a, b in zip(views, views[1:], strict=False) if (d := _diff_of(a, b, diffs))]


def _trend(key: FigureKey, views: list[BuildView], diffs: dict[str, DiffEntry]) -> Trend:
    figure = DIFF_FIGURE[key]
    points = []
    for i, v in enumerate(views):
        changed, link = False, None
        if i and figure is not None:
            d = _diff_of(views[i - 1], v, diffs)
            f = v.entry.row.figures[key]
            if d is not None and d.folder:
                link = Link(f"diff of builds {i} → {i + 1}", f"../{d.folder}/diff.html")
                changed = f"{figure}@{f.scope}" in d.beyond_noise
        points.append(TrendPoint(v, v.cells[key], changed, link))
    figs = [v.entry.row.figures[key] for v in views]
    unit = next((f.unit for f in reversed(figs) if f.value is not None), "")
    chart = line_chart(
        [str(v.number) for v in views],
        "build (oldest first)",
        [
            Series(
                FIGURE_TITLES[key],
                [f.value for f in figs],
                _COLORS[key],
                intervals=[f.bounds() for f in figs],
                marked=[p.changed for p in points],
            )
        ],
        title=f"{FIGURE_TITLES[key]} across builds",
        y_title=unit,
        log_y=False,
        x_names=[f"build {v.number} ({v.entry.row.date})" for v in views],
    )
    return Trend(
        key=key,
        title=FIGURE_TITLES[key],
        unit=unit,
        svg=Markup(chart.svg) if chart else None,
        alt=chart.alt if chart else f"{FIGURE_TITLES[key]}: not measured in any build.",
        points=points,
        compared=figure is not None,
    )


def _remove_stale_pages(pages: Path, keep: set[str]) -> None:
    """Pages of deployments no longer found (and links planted in the folder: unlinked, never followed)."""
    for page in pages.glob("*.html"):
        if page.name not in keep or page.is_symlink():
            page.unlink()


def asset_text(name: str) -> str:
    """An asset's text as packaged (tests compare the site's copy with it)."""
    return resources.files(PACKAGE).joinpath(name).read_text(encoding="utf-8")
