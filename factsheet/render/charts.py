"""Small hand-built SVG line charts for the factsheet (no plotting dependency, no network assets).

Each chart carries its own `<title>` and `<desc>`: the description lists what is plotted (ranges of
every series), for screen readers and as the image's alt text; the visible caption stays short.
X-axis labels that would overlap are thinned (every k-th shown, the first and last always) and tilted.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from markupsafe import Markup

_W, _H = 640, 300
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 150, 34, 46
_FONT = "DejaVu Sans, Arial, sans-serif"
_TICK_FONT = 10.0
# Widest advance of a DejaVu Sans glyph used in labels, in em (digits are 0.636, capitals up to ~0.78):
# a safe upper bound for how wide a label is drawn, so labels never collide.
_EM = 0.7
_LABEL_GAP = 4.0  # px between neighbouring labels
OPEN_ENDED = (
    'stroke-dasharray="2 3" '  # an interval whose upper bound the sample cannot give: dotted to the edge
)


@dataclass(frozen=True)
class Series:
    label: str
    values: list[float | None]  # one per x position; None: no figure at that point (gap, not zero)
    color: str
    dashed: bool = False
    # Per x position (same length as `values`, None where absent): an interval drawn as an error bar (a
    # figure's CI), and whether the point is marked with a ring (e.g. a change beyond noise at that point).
    intervals: list[tuple[float, float] | None] | None = None
    marked: list[bool] | None = None


@dataclass(frozen=True)
class Chart:
    svg: str
    alt: str  # the accessible description: what is plotted, with every series' range
    title: str = ""

    def data_uri(self) -> str:
        # Markup: the tool's own bytes in base64 (nothing to escape), not text to cut or show by code point
        return Markup("data:image/svg+xml;base64," + base64.b64encode(self.svg.encode()).decode())


def line_chart(
    x_labels: list[str],
    x_title: str,
    series: list[Series],
    *,
    title: str,
    y_title: str,
    log_y: bool,
    x_names: list[str] | None = None,
) -> Chart | None:
    """Lines over categorical x positions; None when no series has a single (positive, for log) value.
    `x_names` (default: the labels) name the positions in the description, where the axis has no room."""
    bounds = [b for s in series for iv in (s.intervals or []) if iv is not None for b in iv]
    values = [v for s in series for v in [*s.values, *bounds] if v is not None and (v > 0 or not log_y)]
    if not values:
        return None
    axis = _LogAxis(min(values), max(values)) if log_y else _LinearAxis(min(0.0, min(values)), max(values))
    alt = _alt(title, x_title, x_names or x_labels, series, y_title)
    layout = _XLayout.fit(x_labels)
    height = _H + layout.extra_height
    body = [_frame(title, alt, height), *_y_axis(axis, y_title), *_x_axis(x_labels, x_title, layout, height)]
    body += [_line(s, axis, len(x_labels)) for s in series]
    body += _legend(series)
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {height:.0f}" width="{_W}" '
        f'height="{height:.0f}" role="img" aria-label={quoteattr(alt)} font-family="{_FONT}">'
        + "".join(body)
        + "</svg>"
    )
    return Chart(svg=svg, alt=alt, title=title)


def label_width(label: str, font_size: float = _TICK_FONT) -> float:
    """An upper bound of the drawn width of `label` in px."""
    return len(label) * _EM * font_size


@dataclass(frozen=True)
class _XLayout:
    """How x labels are drawn: every `step`-th (plus the last), upright or tilted by `angle` degrees."""

    step: int
    angle: float
    extra_height: float

    @classmethod
    def fit(cls, labels: list[str]) -> _XLayout:
        n = len(labels)
        if n <= 1:
            return cls(1, 0.0, 0.0)
        spacing = (_W - _LEFT - _RIGHT - 24) / (n - 1)
        widest = max(label_width(x) for x in labels)
        for step in range(1, n):
            if spacing * step >= widest + _LABEL_GAP:
                return cls(step, 0.0, 0.0)
            # Tilted 45°: neighbours are spacing·step·sin 45° apart across the text's line height.
            if spacing * step * 0.707 >= _TICK_FONT * 1.2 + _LABEL_GAP and widest > 3 * _TICK_FONT:
                return cls(step, -45.0, widest * 0.707)
        return cls(n - 1, 0.0, 0.0)

    def shown(self, n: int) -> list[int]:
        """Indices of the labels drawn: every step-th from the first, and the last (which takes the place
        of the one before it when that one would be too close)."""
        idx = list(range(0, n, self.step))
        if idx[-1] != n - 1:
            if len(idx) > 1:
                idx[-1] = n - 1
            else:
                idx.append(n - 1)
        return idx


def _alt(title: str, x_title: str, x_labels: list[str], series: list[Series], y_title: str) -> str:
    def rng(s: Series) -> str:
        got = [v for v in s.values if v is not None]
        if not got:
            return f"{s.label}: no figure"
        missing = [x for x, v in zip(x_labels, s.values, strict=True) if v is None]
        gap = f" (no figure at {', '.join(missing)})" if missing else ""
        marked = [x for x, m in zip(x_labels, s.marked or [], strict=False) if m]
        ring = f" (marked: {', '.join(marked)})" if marked else ""
        return f"{s.label}: {_figure(min(got))}–{_figure(max(got))}{gap}{ring}"

    return (
        f"{title}. Y: {y_title}; X: {x_title} ({', '.join(x_labels)}). "
        + "; ".join(rng(s) for s in series)
        + "."
    )


def _frame(title: str, alt: str, height: float) -> str:
    return (
        f"<title>{escape(title)}</title><desc>{escape(alt)}</desc>"
        f'<rect width="{_W}" height="{height:.0f}" fill="#ffffff"/>'
        f'<text x="{_LEFT}" y="18" font-size="13" font-weight="bold" fill="#1f2a44">{escape(title)}</text>'
    )


class _LinearAxis:
    def __init__(self, lo: float, hi: float):
        span = (hi - lo) or abs(hi) or 1.0
        step = _nice_step(span / 5)
        self.lo, self.hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
        if self.hi == self.lo:
            self.hi = self.lo + step
        self.ticks = [self.lo + i * step for i in range(round((self.hi - self.lo) / step) + 1)]

    def frac(self, v: float) -> float:
        return (v - self.lo) / (self.hi - self.lo)


class _LogAxis:
    def __init__(self, lo: float, hi: float):
        self.lo_exp, self.hi_exp = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        if self.hi_exp == self.lo_exp:
            self.hi_exp += 1
        decades = self.hi_exp - self.lo_exp
        # Fewer decades leave room for 2 and 5 marks, which make the figures readable.
        mults = (1, 2, 5) if decades <= 3 else (1,)
        self.ticks = [
            m * 10.0**e
            for e in range(self.lo_exp, self.hi_exp + 1)
            for m in mults
            if m * 10.0**e <= 10.0**self.hi_exp
        ]

    def frac(self, v: float) -> float:
        return (math.log10(v) - self.lo_exp) / (self.hi_exp - self.lo_exp)


def _nice_step(raw: float) -> float:
    exp = math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * 10.0**exp >= raw:
            return m * 10.0**exp
    return 10.0 ** (exp + 1)


def _plot_y(axis, v: float) -> float:
    return _H - _BOTTOM - axis.frac(v) * (_H - _TOP - _BOTTOM)


def _plot_x(i: int, n: int) -> float:
    width = _W - _LEFT - _RIGHT
    return _LEFT + (width / 2 if n == 1 else 12 + i * (width - 24) / (n - 1))


def _y_axis(axis, y_title: str) -> list[str]:
    out = []
    for t in axis.ticks:
        y = _plot_y(axis, t)
        out.append(
            f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d9dde3" stroke-width="0.6"/>'
            f'<text x="{_LEFT - 6}" y="{y + 3.5:.1f}" font-size="10" text-anchor="end" fill="#333">'
            f"{escape(_short(t))}</text>"
        )
    mid = (_TOP + _H - _BOTTOM) / 2
    out.append(
        f'<text transform="translate(14 {mid:.1f}) rotate(-90)" font-size="10.5" text-anchor="middle" '
        f'fill="#333">{escape(y_title)}</text>'
    )
    return out


def _x_axis(labels: list[str], x_title: str, layout: _XLayout, height: float) -> list[str]:
    base = _H - _BOTTOM
    out = [
        f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{base}" y2="{base}" stroke="#555" stroke-width="0.8"/>'
    ]
    shown = set(layout.shown(len(labels))) if labels else set()
    for i, label in enumerate(labels):
        x = _plot_x(i, len(labels))
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{base}" y2="{base + (4 if i in shown else 2)}" stroke="#555"/>'
        )
        if i not in shown:
            continue
        if layout.angle:
            out.append(
                f'<text class="x-label" transform="translate({x + 3:.1f} {base + 10}) rotate({layout.angle:g})" '
                f'font-size="{_TICK_FONT:g}" text-anchor="end" fill="#333">{escape(label)}</text>'
            )
        else:
            out.append(
                f'<text class="x-label" x="{x:.1f}" y="{base + 16}" font-size="{_TICK_FONT:g}" text-anchor="middle" '
                f'fill="#333">{escape(label)}</text>'
            )
    centre = (_LEFT + _W - _RIGHT) / 2
    out.append(
        f'<text x="{centre:.1f}" y="{height - 8:.0f}" font-size="10.5" text-anchor="middle" fill="#333">'
        f"{escape(x_title)}</text>"
    )
    return out


def _line(s: Series, axis, n: int) -> str:
    dash = ' stroke-dasharray="5 3"' if s.dashed else ""
    parts, run = [], []
    for i, v in enumerate(s.values):
        if v is None or (isinstance(axis, _LogAxis) and v <= 0):
            parts.append(run)
            run = []
            continue
        run.append((_plot_x(i, n), _plot_y(axis, v)))
    parts.append(run)
    out = [_error_bar(_plot_x(i, n), iv, axis, s.color) for i, iv in enumerate(s.intervals or []) if iv]
    for i, m in enumerate(s.marked or []):
        v = s.values[i] if i < len(s.values) else None
        if m and v is not None and (v > 0 or not isinstance(axis, _LogAxis)):
            out.append(
                f'<circle class="marked" cx="{_plot_x(i, n):.1f}" cy="{_plot_y(axis, v):.1f}" r="6.5" '
                f'fill="none" stroke="#b3261e" stroke-width="1.8"/>'
            )
    for run in parts:
        if len(run) > 1:
            pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in run)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{s.color}" stroke-width="1.8"{dash}/>')
        shape = "rect" if s.dashed else "circle"
        for x, y in run:
            if shape == "circle":
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.6" fill="{s.color}"/>')
            else:
                out.append(
                    f'<rect x="{x - 2.4:.1f}" y="{y - 2.4:.1f}" width="4.8" height="4.8" fill="{s.color}"/>'
                )
    return "".join(out)


def _error_bar(x: float, interval: tuple[float, float], axis, color: str) -> str:
    """A vertical bar from the interval's lower to its upper bound, with caps (clipped to a log axis)."""
    lo, hi = interval
    if isinstance(axis, _LogAxis) and (lo <= 0 or hi <= 0):
        return ""
    y1, y2 = _plot_y(axis, lo), _plot_y(axis, hi)
    return (
        f'<path class="interval" d="M{x:.1f},{y1:.1f}V{y2:.1f}M{x - 4:.1f},{y1:.1f}H{x + 4:.1f}'
        f'M{x - 4:.1f},{y2:.1f}H{x + 4:.1f}" stroke="{color}" stroke-width="1.1" fill="none"/>'
    )


def _legend(series: list[Series]) -> list[str]:
    x = _W - _RIGHT + 14
    out = []
    for i, s in enumerate(series):
        y = _TOP + 8 + i * 17
        dash = ' stroke-dasharray="5 3"' if s.dashed else ""
        out.append(
            f'<line x1="{x}" x2="{x + 22}" y1="{y}" y2="{y}" stroke="{s.color}" stroke-width="1.8"{dash}/>'
            f'<text x="{x + 28}" y="{y + 3.5}" font-size="10" fill="#222">{escape(s.label)}</text>'
        )
    return out


def _figure(v: float) -> str:
    """A plotted value in the alt text: one decimal like the tables, or 3 significant digits when small."""
    return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.3g}"


def _short(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}".removesuffix(".0")
    return f"{v:.3g}"


@dataclass(frozen=True)
class Points:
    label: str
    xy: list[tuple[float, float]]
    color: str
    radius: float = 2.6


def scatter_chart(
    groups: list[Points], *, title: str, x_title: str, y_title: str, log_x: bool, log_y: bool
) -> Chart | None:
    """Points on two numeric axes (e.g. every measured configuration, and the Pareto front drawn over them);
    None when there is no point to plot (on a log axis: no positive value)."""
    groups = [
        Points(
            g.label,
            [(x, y) for x, y in g.xy if (x > 0 or not log_x) and (y > 0 or not log_y)],
            g.color,
            g.radius,
        )
        for g in groups
    ]
    xs = [x for g in groups for x, _ in g.xy]
    ys = [y for g in groups for _, y in g.xy]
    if not xs:
        return None

    def axis(lo: float, hi: float, log: bool):
        return _LogAxis(lo, hi) if log else _LinearAxis(min(0.0, lo), hi)

    ax, ay = axis(min(xs), max(xs), log_x), axis(min(ys), max(ys), log_y)
    alt = (
        f"{title}. X: {x_title}; Y: {y_title}. "
        + "; ".join(
            f"{g.label}: {len(g.xy)} points"
            + (
                f", x {_figure(min(x for x, _ in g.xy))}–{_figure(max(x for x, _ in g.xy))}, "
                f"y {_figure(min(y for _, y in g.xy))}–{_figure(max(y for _, y in g.xy))}"
                if g.xy
                else ""
            )
            for g in groups
        )
        + "."
    )
    width = _W - _LEFT - _RIGHT - 24

    def px(v: float) -> float:
        return _LEFT + 12 + ax.frac(v) * width

    base = _H - _BOTTOM
    body = [_frame(title, alt, _H), *_y_axis(ay, y_title)]
    body.append(
        f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{base}" y2="{base}" stroke="#555" stroke-width="0.8"/>'
    )
    for t in ax.ticks:
        x = px(t)
        body.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{base}" y2="{base + 4}" stroke="#555"/>'
            f'<text class="x-label" x="{x:.1f}" y="{base + 16}" font-size="{_TICK_FONT:g}" text-anchor="middle" '
            f'fill="#333">{escape(_short(t))}</text>'
        )
    centre = (_LEFT + _W - _RIGHT) / 2
    body.append(
        f'<text x="{centre:.1f}" y="{_H - 8:.0f}" font-size="10.5" text-anchor="middle" fill="#333">'
        f"{escape(x_title)}</text>"
    )
    for g in groups:
        body += [
            f'<circle cx="{px(x):.1f}" cy="{_plot_y(ay, y):.1f}" r="{g.radius:g}" fill="{g.color}" fill-opacity="0.8"/>'
            for x, y in g.xy
        ]
    for i, g in enumerate(groups):  # legend: a marker and the label
        lx, ly = _W - _RIGHT + 14, _TOP + 8 + i * 17
        body.append(
            f'<circle cx="{lx + 11}" cy="{ly}" r="{g.radius:g}" fill="{g.color}"/>'
            f'<text x="{lx + 28}" y="{ly + 3.5}" font-size="10" fill="#222">{escape(g.label)}</text>'
        )
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" role="img" '
        f'aria-label={quoteattr(alt)} font-family="{_FONT}">' + "".join(body) + "</svg>"
    )
    return Chart(svg=svg, alt=alt, title=title)


@dataclass(frozen=True)
class Marks:
    """Points on two numeric axes drawn with one marker, each with an optional vertical interval (a figure's
    CI: None at a bound the sample cannot give, drawn to the plot's edge and said so in the description)."""

    label: str
    xy: list[tuple[float, float]]
    color: str
    shape: str = "circle"  # circle, ring (open), diamond, square; "line": joined by a line, no markers
    intervals: list[tuple[float | None, float | None] | None] | None = None


@dataclass(frozen=True)
class Rule:
    """A reference line across the plot: a threshold (axis "y") or a value on the x axis (axis "x")."""

    label: str
    value: float
    axis: str
    color: str = "#b3261e"


@dataclass(frozen=True)
class Band:
    """A shaded span of the x axis (e.g. a capacity search's bracket)."""

    label: str
    lo: float
    hi: float
    color: str = "#f2d58a"


def xy_chart(
    groups: list[Marks],
    *,
    title: str,
    x_title: str,
    y_title: str,
    rules: tuple[Rule, ...] = (),
    bands: tuple[Band, ...] = (),
    x_from_zero: bool = False,
) -> Chart | None:
    """Markers (and lines) on two linear numeric axes, the y axis from 0, with reference lines and shaded
    x spans; the description lists every point, so the picture holds nothing the text does not."""
    xs = [x for g in groups for x, _ in g.xy] + [r.value for r in rules if r.axis == "x"]
    xs += [b for band in bands for b in (band.lo, band.hi)]
    ys = [y for g in groups for _, y in g.xy] + [r.value for r in rules if r.axis == "y"]
    ys += [b for g in groups for iv in (g.intervals or []) if iv for b in iv if b is not None]
    if not [1 for g in groups if g.xy]:
        return None
    ax = _LinearAxis(0.0 if x_from_zero else min(xs), max(xs))
    ay = _LinearAxis(0.0, max(ys))
    width = _W - _LEFT - _RIGHT - 24

    def px(v: float) -> float:
        return _LEFT + 12 + ax.frac(v) * width

    def py(v: float) -> float:
        return _plot_y(ay, v)

    alt = _xy_alt(title, x_title, y_title, groups, rules, bands)
    base, top = _H - _BOTTOM, _TOP
    body = [_frame(title, alt, _H)]
    for band in bands:
        body.append(
            f'<rect class="band" x="{px(band.lo):.1f}" y="{top}" width="{max(px(band.hi) - px(band.lo), 1.5):.1f}" '
            f'height="{base - top}" fill="{band.color}" fill-opacity="0.45"/>'
        )
    body += _y_axis(ay, y_title)
    body.append(
        f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{base}" y2="{base}" stroke="#555" stroke-width="0.8"/>'
    )
    for t in ax.ticks:
        body.append(
            f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{base}" y2="{base + 4}" stroke="#555"/>'
            f'<text class="x-label" x="{px(t):.1f}" y="{base + 16}" font-size="{_TICK_FONT:g}" text-anchor="middle" '
            f'fill="#333">{escape(_short(t))}</text>'
        )
    centre = (_LEFT + _W - _RIGHT) / 2
    body.append(
        f'<text x="{centre:.1f}" y="{_H - 8:.0f}" font-size="10.5" text-anchor="middle" fill="#333">'
        f"{escape(x_title)}</text>"
    )
    body += [_rule(r, px, py) for r in rules]
    for g in groups:
        for i, (x, _) in enumerate(g.xy):
            iv = g.intervals[i] if g.intervals and i < len(g.intervals) else None
            if iv is not None:
                lo, hi = (py(iv[0]) if iv[0] is not None else base), (py(iv[1]) if iv[1] is not None else top)
                body.append(
                    f'<path class="interval" d="M{px(x):.1f},{lo:.1f}V{hi:.1f}M{px(x) - 4:.1f},{lo:.1f}H{px(x) + 4:.1f}'
                    f'{"" if iv[1] is None else f"M{px(x) - 4:.1f},{hi:.1f}H{px(x) + 4:.1f}"}" stroke="{g.color}" '
                    f"{OPEN_ENDED if iv[1] is None else ''}"
                    f'stroke-width="1.1" fill="none"/>'
                )
        if g.shape == "line" and len(g.xy) > 1:
            pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in g.xy)
            body.append(f'<polyline points="{pts}" fill="none" stroke="{g.color}" stroke-width="1.8"/>')
        elif g.shape != "line":
            body += [_marker(g.shape, px(x), py(y), g.color) for x, y in g.xy]
    body += _xy_legend(groups, rules, bands)
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" role="img" '
        f'aria-label={quoteattr(alt)} font-family="{_FONT}">' + "".join(body) + "</svg>"
    )
    return Chart(svg=svg, alt=alt, title=title)


def _rule(r: Rule, px, py) -> str:
    if r.axis == "y":
        return (
            f'<line class="rule" x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{py(r.value):.1f}" y2="{py(r.value):.1f}" '
            f'stroke="{r.color}" stroke-width="1.4" stroke-dasharray="6 3"/>'
        )
    return (
        f'<line class="rule" x1="{px(r.value):.1f}" x2="{px(r.value):.1f}" y1="{_TOP}" y2="{_H - _BOTTOM}" '
        f'stroke="{r.color}" stroke-width="1.4" stroke-dasharray="6 3"/>'
    )


def _xy_legend(groups: list[Marks], rules, bands) -> list[str]:
    legend = [(g.label, g.color, g.shape) for g in groups] + [(r.label, r.color, "rule") for r in rules]
    legend += [(b.label, b.color, "band") for b in bands]
    out = []
    for i, (label, color, shape) in enumerate(legend):
        lx, ly = _W - _RIGHT + 14, _TOP + 8 + i * 17
        if shape == "rule":
            key = f'<line x1="{lx}" x2="{lx + 22}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="1.4" stroke-dasharray="6 3"/>'
        elif shape == "band":
            key = f'<rect x="{lx}" y="{ly - 5}" width="22" height="10" fill="{color}" fill-opacity="0.45"/>'
        elif shape == "line":
            key = f'<line x1="{lx}" x2="{lx + 22}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="1.8"/>'
        else:
            key = _marker(shape, lx + 11, ly, color)
        out.append(
            key + f'<text x="{lx + 28}" y="{ly + 3.5}" font-size="10" fill="#222">{escape(label)}</text>'
        )
    return out


def _marker(shape: str, x: float, y: float, color: str) -> str:
    if shape == "ring":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.6" fill="#fff" stroke="{color}" stroke-width="1.6"/>'
    if shape == "diamond":
        return (
            f'<path d="M{x:.1f},{y - 5:.1f}L{x + 5:.1f},{y:.1f}L{x:.1f},{y + 5:.1f}L{x - 5:.1f},{y:.1f}Z" '
            f'fill="{color}" stroke="#fff" stroke-width="0.6"/>'
        )
    if shape == "square":
        return f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" fill="{color}"/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.4" fill="{color}"/>'


def _xy_alt(title: str, x_title: str, y_title: str, groups: list[Marks], rules, bands) -> str:
    def point(g: Marks, i: int) -> str:
        x, y = g.xy[i]
        iv = g.intervals[i] if g.intervals and i < len(g.intervals) else None
        ci = (
            ""
            if iv is None
            else f" [{'—' if iv[0] is None else _figure(iv[0])}, {'—' if iv[1] is None else _figure(iv[1])}]"
        )
        return f"({_figure(x)}, {_figure(y)}{ci})"

    parts = [f"{g.label}: " + (", ".join(point(g, i) for i in range(len(g.xy))) or "none") for g in groups]
    parts += [f"{r.label} at {_figure(r.value)}" for r in rules]
    parts += [f"{b.label} from {_short(b.lo)} to {_short(b.hi)}" for b in bands]
    return f"{title}. X: {x_title}; Y: {y_title}. " + "; ".join(parts) + "."
