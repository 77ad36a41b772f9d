"""A real MLflow tracking server on 127.0.0.1 (SQLite backend store, artifacts served from a local folder),
and a forwarding proxy in front of it that refuses artifact uploads after the first: the refused write a
read-only artifact store gives (these tests run as root, for whom a read-only folder is still writable)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

from probes.targets.ports import free_port

START_TIMEOUT_S = 240  # a loaded 2-core CI host takes a minute to import and migrate the store
ARTIFACT_UPLOAD = "/api/2.0/mlflow-artifacts/artifacts/"


@contextmanager
def mlflow_server(folder: Path):
    """`mlflow server` from this environment; yields its URI; the whole process group is stopped after."""
    port = free_port()
    cmd = [
        str(Path(sys.executable).with_name("mlflow")),
        "server",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--backend-store-uri", f"sqlite:///{folder / 'mlflow.db'}",
        "--artifacts-destination", str(folder / "artifacts"),
        "--serve-artifacts",
        "--workers", "1",
    ]  # fmt: skip
    # The job runner (huey consumers for GenAI evaluation jobs) is not needed to track runs: off.
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    log = open(folder / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"mlflow server exited {proc.returncode}: {(folder / 'server.log').read_text()}"
                )
            try:
                if httpx.get(f"{uri}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"mlflow server not up in {START_TIMEOUT_S} s")
            time.sleep(0.5)
        yield uri
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
                proc.wait(timeout=15)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue
        log.close()


class _Refusing(BaseHTTPRequestHandler):
    upstream: tuple[str, int]
    allowed_uploads: int
    uploads = 0
    lock = threading.Lock()

    def log_message(self, *args):  # quiet
        pass

    def _forward(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.command == "PUT" and self.path.startswith(ARTIFACT_UPLOAD):
            with self.lock:
                type(self).uploads += 1
                refuse = type(self).uploads > self.allowed_uploads
            if refuse:
                data = json.dumps(
                    {"error_code": "PERMISSION_DENIED", "message": "artifact store is read-only"}
                )
                self.send_response(403)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())
                return
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        headers["Host"] = f"{self.upstream[0]}:{self.upstream[1]}"  # the server accepts only its own host
        conn.request(self.command, self.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward


@contextmanager
def refusing_proxy(upstream_uri: str, allowed_uploads: int = 1):
    """A proxy to `upstream_uri` that answers 403 to every artifact upload after the first
    `allowed_uploads`: the run is created and its first file stored, then the store refuses."""
    host, port = upstream_uri.removeprefix("http://").split(":")
    handler = type(
        "Handler", (_Refusing,), {"upstream": (host, int(port)), "allowed_uploads": allowed_uploads}
    )
    with serving(handler) as uri:
        yield uri


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]):
    """`handler` served on 127.0.0.1 from a thread; yields its base URI, shuts it down after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
