"""Joining the server view to a load point: its figures and saturation verdict from plain inputs (the load
probe and `validate` both come through `point_server_side`), and the interim check of `stop_when_saturated`."""

from __future__ import annotations

from collections.abc import Callable

from probes.core.measurement import NotMeasured
from probes.server_view import page
from probes.server_view.figures import ServerView, server_view, total
from probes.server_view.records import ScrapeRecord
from probes.server_view.saturation import Saturation, TrendTest, saturation, ttft_trend, waiting_trend


def _waiting(scrapes: list[ScrapeRecord], start: float, end: float) -> TrendTest | None:
    points = [(s.t_s, total(s, page.WAITING)) for s in scrapes if s.ok and start <= s.t_s <= end]
    points = [(t, v) for t, v in points if v is not None]
    if not points:
        return None
    return waiting_trend([t for t, _ in points], [v for _, v in points])


def _sending_end(scrapes: list[ScrapeRecord], last_send: float) -> float:
    """The first scrape at or after the last send: the last page that saw the queue while sending (when a
    point is stopped on saturation, the page that stopped it)."""
    return min((s.t_s for s in scrapes if s.t_s >= last_send), default=last_send)


def point_server_side(
    scrapes: list[ScrapeRecord] | NotMeasured,
    interval_s: float,
    sends: list[float],
    ends: list[float],
    ttft_by_send: list[tuple[float, float]],
    client_ttft_p50_ms: float | None,
    stop_when_saturated: bool = False,
) -> tuple[ServerView | NotMeasured, Saturation]:
    """`sends`/`ends`: every request's send and end time (s, the records' clock); `ttft_by_send`: (send
    time, client TTFT ms) of each completed request."""
    ttft = ttft_trend([t for t, _ in ttft_by_send], [v for _, v in ttft_by_send])
    if isinstance(scrapes, NotMeasured):
        return scrapes, saturation(None, ttft, stop_when_saturated)
    in_flight = (min(sends), max(ends or sends)) if sends else None
    waiting = _waiting(scrapes, min(sends), _sending_end(scrapes, max(sends))) if sends else None
    return (
        server_view(scrapes, interval_s, in_flight, client_ttft_p50_ms),
        saturation(waiting, ttft, stop_when_saturated, interval_s),
    )


def saturation_watch(stop: Callable[[str], None]) -> Callable[[list[tuple[float, float]]], None]:
    """An `on_scrape` for the Scraper: after every page, the waiting-queue test on (t_s, waiting) of the pages
    read since the run's clock started (all taken while sending); `stop(reason)` once it grows."""

    def check(points: list[tuple[float, float]]) -> None:
        test = waiting_trend([t for t, _ in points], [w for _, w in points])
        if test.grows:
            stop(
                f"over-saturated: the waiting queue grew by {test.growth:.3g} requests over {test.span_s:.3g} s "
                f"(Theil–Sen {test.slope_per_s:.3g}/s, Mann–Kendall p {test.p_value:.2g})"
            )

    return check
