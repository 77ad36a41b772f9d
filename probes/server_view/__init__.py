"""The server's view of a load point: its Prometheus `/metrics` scraped while the point runs (prefix-cache hit
rate, KV-cache usage, running and waiting requests, preemptions, the server's own TTFT and E2EL), and the
saturation test that flags a point whose queue or TTFT grows without bound."""

from probes.server_view.figures import ServerView
from probes.server_view.page import PageError, parse_page
from probes.server_view.records import ScrapeRecord, load_scrapes, scrapes_jsonl
from probes.server_view.saturation import Saturation, TrendTest
from probes.server_view.scraper import NO_ENDPOINT, PageUnread, Scraper, check_endpoint, fetch_page
from probes.server_view.spec import DEFAULT_INTERVAL_S, ServerViewSpec
from probes.server_view.watch import point_server_side, saturation_watch

__all__ = [
    "DEFAULT_INTERVAL_S",
    "NO_ENDPOINT",
    "PageError",
    "PageUnread",
    "Saturation",
    "ScrapeRecord",
    "Scraper",
    "ServerView",
    "ServerViewSpec",
    "TrendTest",
    "check_endpoint",
    "fetch_page",
    "load_scrapes",
    "parse_page",
    "point_server_side",
    "saturation_watch",
    "scrapes_jsonl",
]
