"""What a server says of itself, asked once before anything is measured: its identity endpoints, its
/v1/models listing, the names on its /metrics page and its response headers. Every answer is kept as found
(status, a JSON object or list, the headers the adapters read); no answer is an error here: an engine is
known by what it answers, and a server that answers none of these is a generic OpenAI-compatible one."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx

from probes.server_view.page import SAMPLE_NAMES, PageError, parse_page
from probes.server_view.scraper import PageUnread, fetch_page

# Each engine's own identity endpoints (docs/servers.md).
IDENTITY_PATHS = (
    "/version",  # vLLM
    "/get_server_info",  # SGLang (older)
    "/server_info",  # SGLang
    "/info",  # TGI
    "/props",  # llama.cpp server
    "/api/version",  # Ollama
    "/api/ps",  # Ollama: the models loaded
    "/health",  # llama.cpp server, transformers serve
)
SURVEY_TIMEOUT_S = 3.0
MAX_ANSWER_BYTES = 256 * 1024  # an identity answer is a few hundred bytes; a larger one is not read
HEADERS_KEPT = ("server", "x-request-id")


@dataclass
class Answer:
    """One GET's answer: the status (None: no answer), the body when it read as JSON, the kept headers."""

    status: int | None
    body: object = None
    headers: dict[str, str] = field(default_factory=dict)

    def obj(self) -> dict:
        """The body when the server answered 200 with a JSON object; else empty."""
        return self.body if self.status == 200 and isinstance(self.body, dict) else {}


@dataclass
class Survey:
    """The server's answers, by path; `metric_names`: the sample names of /metrics the server view reads."""

    answers: dict[str, Answer] = field(default_factory=dict)
    listing: object = None
    metric_names: frozenset[str] = frozenset()

    def obj(self, path: str) -> dict:
        answer = self.answers.get(path)
        return answer.obj() if answer is not None else {}

    def header(self, name: str) -> str | None:
        return next((a.headers[name] for a in self.answers.values() if name in a.headers), None)

    def listed(self) -> list[dict]:
        """The /v1/models entries, either shape (an object's `data`, or a bare list)."""
        data = self.listing.get("data") if isinstance(self.listing, dict) else self.listing
        return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []

    def metric_prefixed(self, prefix: str) -> bool:
        return any(n.startswith(prefix) for n in self.metric_names)


def _json(body: bytes) -> object:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None


def _answer(client: httpx.Client, url: str) -> Answer:
    """A small GET with its headers kept; the body read to MAX_ANSWER_BYTES (a longer one is not JSON here)."""
    try:
        with client.stream("GET", url) as resp:
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if len(body) > MAX_ANSWER_BYTES:
                    body = bytearray()
                    break
            kept = {k: resp.headers[k] for k in HEADERS_KEPT if k in resp.headers}
            return Answer(status=resp.status_code, body=_json(bytes(body)), headers=kept)
    except httpx.HTTPError:
        return Answer(status=None)


def survey(base_url: str, headers: dict[str, str], listing: object = None) -> Survey:
    """Ask the server at `base_url` (no /v1) who it is. `listing`: /v1/models as already read, if it was."""
    found = Survey(listing=listing)
    with httpx.Client(headers=headers, timeout=SURVEY_TIMEOUT_S) as client:
        for path in IDENTITY_PATHS:
            found.answers[path] = _answer(client, base_url + path)
        if listing is None:
            models = _answer(client, base_url + "/v1/models")
            found.listing = models.body if models.status == 200 else None
    found.metric_names = metric_names(base_url, headers)
    return found


def metric_names(base_url: str, headers: dict[str, str]) -> frozenset[str]:
    """The server view's sample names on the server's /metrics page (empty: no page, or not Prometheus)."""
    try:
        with httpx.Client(headers=headers, timeout=SURVEY_TIMEOUT_S) as client:
            status, body = fetch_page(client, base_url + "/metrics", SURVEY_TIMEOUT_S)
    except (httpx.HTTPError, PageUnread):
        return frozenset()
    if status != 200:
        return frozenset()
    try:
        return frozenset(s.name for s in parse_page(body.decode("utf-8", "replace"), names=SAMPLE_NAMES))
    except PageError:
        return frozenset()
