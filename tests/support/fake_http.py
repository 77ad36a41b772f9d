"""Local HTTP servers for tests: the replies a fake endpoint writes (JSON, server-sent events, a file), and
the server that runs a handler on a free port for as long as a test needs it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from probes.accuracy.dataset import HUMANEVALPLUS_FILE, HUMANEVALPLUS_VERSION


class FakeHandler(BaseHTTPRequestHandler):
    """A handler that writes whole replies and logs nothing."""

    def read_json(self) -> dict:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def reply(self, data: bytes, content_type: str | None = None) -> None:
        self.send_response(200)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def reply_json(self, obj: object) -> None:
        self.reply(json.dumps(obj).encode(), "application/json")

    def reply_events(self, events: list[object]) -> None:
        """An OpenAI-style stream: one `data:` line per event, then `[DONE]`."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for event in events:
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")

    def log_message(self, *args) -> None:
        pass


class Recording(FakeHandler):
    """Records every request's path and answers 500: a server that proves nothing was sent to it."""

    requests: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server API
        self.requests.append(self.path)
        self.send_error(500)

    do_POST = do_GET  # noqa: N815


@contextmanager
def serving(
    handler_cls: type[BaseHTTPRequestHandler], server_cls: type[ThreadingHTTPServer] = ThreadingHTTPServer
) -> Iterator[str]:
    """Runs the handler on a free local port; yields its base URL, shuts it down after."""
    server = server_cls(("127.0.0.1", 0), handler_cls)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serving_release(payload: bytes) -> Iterator[str]:
    """The HumanEval+ release download, served locally: `payload` at the pinned release's path, 404
    elsewhere. Yields the URL base to set as FACTSHEET_HUMANEVAL_URL_BASE."""

    class Release(FakeHandler):
        def do_GET(self):  # noqa: N802 - http.server API
            if self.path != f"/{HUMANEVALPLUS_VERSION}/{HUMANEVALPLUS_FILE}":
                self.send_error(404)
                return
            self.reply(payload)

    with serving(Release) as url:
        yield url
