"""The site's pages: an index with one row per build, and a page per deployment with trend charts (the
project's SVG charts, each with a caption and a data table as its text alternative) and links to every
document. Written from the manifest alone, so an incremental rebuild re-renders without reading factsheets.

Pages are plain HTML tables first; the small script (package data, copied into the site) only adds sorting
and filtering. Nothing is fetched at view time: CSS and JS are files in the site, charts are inline SVG."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from jinja2 import Environment, FunctionLoader, StrictUndefined
from markupsafe import Markup

from factsheet import outputs as o
from factsheet.catalogue.manifest import DiffEntry, Entry, Manifest
from factsheet.catalogue.rows import DIFF_FIGURE, FIGURE_KEYS, FIGURE_TITLES, FigureKey, HeadlineFigure
from factsheet.provenance import tool_version, utc_now
from factsheet.render import Series, line_chart
from factsheet.resources import data_file
from probes.core.files import write_atomic

PACKAGE = "factsheet.catalogue"
ASSETS = ("catalogue.css", "catalogue.js")
DOCUMENT_LABELS = {
    o.FACTSHEET_JSON: "JSON",
    o.FACTSHEET_HTML: "HTML",
    o.FACTSHEET_PDF: "PDF",
    o.ATTESTATION: "attestation",
    o.COMPLIANCE_HTML: "compliance report",
    o.COMPLIANCE_JSON: "compliance JSON",
    o.COMPLIANCE_PDF: "compliance PDF",
    o.COMPLIANCE_JUNIT: "compliance JUnit",
}
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


def slug(deployment: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", deployment.lower()).strip("-")[:60] or "deployment"
    return f"{base}-{hashlib.sha256(deployment.encode()).hexdigest()[:8]}"


def _env() -> Environment:
    def load(name: str) -> str:
        return data_file(PACKAGE, name).read_text(encoding="utf-8")

    return Environment(loader=FunctionLoader(load), autoescape=True, undefined=StrictUndefined)


def cell(f: HeadlineFigure, key: FigureKey) -> Cell:
    if f.value is None:
        return Cell("not measured", "", "", f.missing or "")
    bounds = ""
    if f.lower is not None or f.upper is not None:
        lo = "—" if f.lower is None else _num(f.lower, key)
        hi = "—" if f.upper is None else _num(f.upper, key)
        bounds = f"[{lo}, {hi}{')' if key == 'capacity' else ']'}"
    unit = "" if key == "pass_at_1" else f" {f.unit}"
    return Cell(f"{_num(f.value, key)}{unit}", bounds, repr(f.value), f.interval)


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
        Link(DOCUMENT_LABELS[n], f"{prefix}{entry.folder}/{n}") for n in DOCUMENT_LABELS if n in entry.copied
    ]


def _views(manifest: Manifest, prefix: str) -> dict[str, list[BuildView]]:
    groups: dict[str, list[Entry]] = {}
    for e in manifest.entries.values():
        groups.setdefault(e.row.deployment, []).append(e)
    out = {}
    for dep, entries in sorted(groups.items()):
        entries.sort(key=lambda e: (e.row.date, e.row.sha256))
        href = f"{'' if prefix else 'deployments/'}{slug(dep)}.html"
        out[dep] = [
            BuildView(e, i + 1, {k: cell(e.row.figures[k], k) for k in FIGURE_KEYS}, _links(e, prefix), href)
            for i, e in enumerate(entries)
        ]
    return out


def write_pages(site: Path, manifest: Manifest) -> Path:
    env = _env()
    for name in ASSETS:
        write_atomic(site / "assets" / name, data_file(PACKAGE, name).read_bytes())
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
    for dep, views in _views(manifest, "../").items():
        trends = [_trend(k, views, manifest.diffs) for k in FIGURE_KEYS]
        page = env.get_template("deployment.html.j2").render(
            deployment=dep, builds=views, trends=trends, titles=FIGURE_TITLES, keys=FIGURE_KEYS,
            diffs=_pair_links(views, manifest.diffs), generated=generated,
        )  # fmt: skip
        write_atomic(site / "deployments" / f"{slug(dep)}.html", page.encode())
    _remove_stale_pages(site, {f"{slug(d)}.html" for d in by_dep})
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
                intervals=[
                    (f.lower, f.upper) if f.lower is not None and f.upper is not None else None for f in figs
                ],
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


def _remove_stale_pages(site: Path, keep: set[str]) -> None:
    base = site / "deployments"
    for page in base.glob("*.html"):
        if page.name not in keep and page.is_file() and not page.is_symlink():
            page.unlink()


def asset_text(name: str) -> str:
    """An asset's text as packaged (tests compare the site's copy with it)."""
    return resources.files(PACKAGE).joinpath(name).read_text(encoding="utf-8")
