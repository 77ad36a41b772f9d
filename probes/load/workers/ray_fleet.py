"""The workers as Ray actors placed across a cluster's nodes (`load.executor: ray`).

Each actor runs one worker's share (child.run_job) on its node. The nodes' clocks are not one clock: the
coordinator measures each actor's offset by round trips (the least-delayed of ROUND_TRIPS; the offset is
known to ± half its round trip) and gives every actor the run's start on its own clock, so each worker's
records run from the same instant to within that uncertainty, which the result states. A worker whose
actor or node is lost mid-run is named; its records are lost with it and its requests count as not sent.
Ray is an optional extra: it is imported only when this executor is asked for."""

from __future__ import annotations

import asyncio
import signal
import socket
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from probes.core.untrusted.text import printable
from probes.load.records import RequestRecord
from probes.load.workers.check import ClockOffset
from probes.load.workers.child import LocalShared, WorkerJob, WorkerReport, run_job
from probes.load.workers.fleet import Fleet, Outcome, WorkersError

ROUND_TRIPS = 8
_START_AHEAD_S = 1.0  # the start lies this far ahead when it is sent, so every actor sleeps to it
# The whole check of a ray_address (connect, then a gRPC server's first frame): a cluster on a LAN answers in
# milliseconds; a port that accepts and says nothing is refused at this deadline.
CONNECT_S = 3.0
# Joining the cluster once it answered (ray.init: a driver registers with the GCS): seconds on a LAN.
RAY_INIT_S = 60.0
# A client's HTTP/2 connection preface and an empty SETTINGS frame (RFC 9113 §3.4): a gRPC server answers
# with its own SETTINGS frame (9-byte header, type 4) before anything else.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_H2_SETTINGS = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_SETTINGS_FRAME = 4


class _LoadActor:
    """One worker on one node (a threaded actor, so `stop` reaches it while `run` runs)."""

    def __init__(self) -> None:
        self.shared: LocalShared | None = None

    def clock(self) -> float:
        return time.time()

    def node(self) -> str:
        # deferred: the actor runs where Ray is installed; this module is imported without it
        import ray

        return ray.get_runtime_context().get_node_id()

    def run(self, job: WorkerJob, start_epoch: float) -> tuple[str, bytes, bytes]:
        """Its report, its records file and (chat sessions) the bodies it sent, as bytes."""
        with tempfile.TemporaryDirectory(prefix="factsheet-load-") as d:
            job = replace(
                job, records_path=str(Path(d) / "records.jsonl"), bodies_path=str(Path(d) / "bodies")
            )
            self.shared = LocalShared(job, time.perf_counter() + (start_epoch - time.time()))
            report = run_job(job, self.shared)
            path, bodies = Path(job.records_path), Path(job.bodies_path)
            return (
                report.model_dump_json(),
                path.read_bytes() if path.exists() else b"",
                bodies.read_bytes() if bodies.exists() else b"",
            )

    def stop(self) -> None:
        if self.shared is not None:
            self.shared.stop.set()


def _ray():
    try:
        # deferred: Ray is the optional `ray` extra, needed only with load.executor: ray
        import ray
    except ImportError:
        raise WorkersError("load.executor: ray is not installed (pip install 'llm-factsheet[ray]')") from None
    return ray


def check_address(address: str, field: str = "ray_address") -> None:
    """A `ray_address` that is not a Ray server answering within CONNECT_S is refused, before anything is
    sent: ray.init would retry for minutes, flooding stderr, and block in C where a stop signal waits for
    it. Both of Ray's servers (a cluster's GCS, `host:port`; Ray Client, `ray://host:port`) speak gRPC, so
    an HTTP/2 exchange of SETTINGS frames tells one that answers from a port that accepts and stays silent."""
    host, port = _host_port(address, field)
    deadline = time.monotonic() + CONNECT_S
    try:
        conn = socket.create_connection((host, port), timeout=CONNECT_S)
    except OSError as exc:
        raise WorkersError(f"{field}: cannot reach {host}:{port} ({exc.strerror or exc})") from None
    try:
        with conn:
            conn.sendall(_H2_PREFACE + _H2_SETTINGS)
            header = _receive(conn, 9, deadline)
    except TimeoutError:
        raise WorkersError(
            f"{field}: {host}:{port} accepted the connection but did not answer within {CONNECT_S:g} s "
            "(not a Ray cluster's address)"
        ) from None
    except OSError as exc:
        raise WorkersError(f"{field}: {host}:{port} ({exc.strerror or exc})") from None
    if len(header) < 9 or header[3] != _SETTINGS_FRAME:
        raise WorkersError(f"{field}: {host}:{port} answered, but not as a Ray cluster (no gRPC server)")


async def _init(ray, address: str | None) -> None:
    """ray.init, bounded. Joining a cluster runs in a thread of its own, waited for at most RAY_INIT_S: a
    server that answers gRPC but never Ray's calls keeps ray.init retrying in C for minutes, where neither a
    deadline nor a stop signal reaches the main thread (Ray then sets no SIGTERM handler of its own either).
    A local instance must start in the main thread (its node sets a SIGTERM handler); the handlers the tool
    had are put back after it, so a stop signal keeps the tool's rule (exit 143 / 130 within a second)."""
    if address is None:
        handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            ray.init(log_to_driver=False)
        finally:
            if threading.current_thread() is threading.main_thread():
                for s, handler in handlers.items():
                    if handler is not None:
                        signal.signal(s, handler)
        return
    done, failed = _start_joining(ray, address, log_to_driver=False)
    deadline = time.monotonic() + RAY_INIT_S
    while not done.is_set() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    _joined(done, failed, address)


def join_cluster(ray, address: str, log_to_driver: bool = True) -> None:
    """ray.init(address) as `_init` joins it, for a caller without an event loop (a campaign's executor):
    refused at RAY_INIT_S; a stop signal still reaches the main thread, which only waits."""
    done, failed = _start_joining(ray, address, log_to_driver)
    done.wait(RAY_INIT_S)
    _joined(done, failed, address)


def _start_joining(ray, address: str, log_to_driver: bool) -> tuple[threading.Event, list[Exception]]:
    done, failed = threading.Event(), []

    def join() -> None:
        try:
            ray.init(address=address, log_to_driver=log_to_driver)
        except Exception as exc:  # named in the refusal (`_joined`)
            failed.append(exc)
        finally:
            done.set()

    threading.Thread(target=join, name="ray-init", daemon=True).start()
    return done, failed


def _joined(done: threading.Event, failed: list[Exception], address: str) -> None:
    if not done.is_set():
        raise WorkersError(f"ray_address: {address}: Ray did not connect within {RAY_INIT_S:g} s")
    if failed:
        reason = printable(f"{type(failed[0]).__name__}: {failed[0]}")
        raise WorkersError(f"ray_address: {address}: Ray did not connect ({reason})")


def _host_port(address: str, field: str) -> tuple[str, int]:
    try:
        parts = urlsplit(address if "://" in address else f"ray://{address}")
        host, port = parts.hostname, parts.port
    except ValueError:  # "[::1" (an unclosed IPv6 bracket), a port past 65535 or not a number
        host = port = None
    if not host or not port:
        raise WorkersError(f"{field}: {printable(address)!r} is not host:port")
    return host, port


def _receive(conn: socket.socket, size: int, deadline: float) -> bytes:
    """Up to `size` bytes by `deadline` (a server dripping a byte at a time is held to it too)."""
    data = b""
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        conn.settimeout(left)
        chunk = conn.recv(size - len(data))
        if not chunk:
            break  # closed: what came is judged
        data += chunk
    return data


class RayFleet(Fleet):
    """As `Fleet`, with the workers as Ray actors (one CPU each, spread across the nodes)."""

    def __init__(self, *args, ray_address: str | None = None):
        super().__init__(*args)
        self.ray_address = ray_address
        self.actors: list = []
        self.offsets: list[ClockOffset] = []

    async def __aenter__(self) -> RayFleet:
        ray = _ray()
        if self.ray_address:
            check_address(self.ray_address)
        if not ray.is_initialized():
            await _init(ray, self.ray_address)
        cpus = ray.cluster_resources().get("CPU", 0)
        if cpus < self.workers:
            raise WorkersError(f"load.workers: {self.workers} is more than the Ray cluster's {cpus:g} CPUs")
        actor = ray.remote(num_cpus=1, max_concurrency=2, scheduling_strategy="SPREAD")(_LoadActor)
        self.actors = [actor.remote() for _ in range(self.workers)]
        nodes = await asyncio.to_thread(ray.get, [a.node.remote() for a in self.actors])
        for w, (a, node) in enumerate(zip(self.actors, nodes, strict=True)):
            self.offsets.append(await asyncio.to_thread(_offset, ray, a, w, node))
        return self

    async def __aexit__(self, *exc) -> None:
        ray = _ray()
        for a in self.actors:
            ray.kill(a)
        self.dir.cleanup()

    async def ready(self) -> None:
        return None  # an actor is ready once its clock has answered

    def go(self) -> tuple[float, float]:
        self.started_at = time.time() + _START_AHEAD_S
        self.t0 = time.perf_counter() + _START_AHEAD_S
        self.refs = [
            a.run.remote(job, self.started_at + o.offset_ms / 1000)
            for a, job, o in zip(self.actors, self.jobs, self.offsets, strict=True)
        ]
        return self.t0, self.started_at

    def stop(self) -> None:
        for a in self.actors:
            a.stop.remote()

    async def wait(self, progress, should_stop) -> Outcome:
        ray = _ray()
        reports: list[WorkerReport] = []
        records: list[RequestRecord] = []
        lost: list[str] = []
        pending = dict(zip(self.refs, range(self.workers), strict=True))
        stopped = False
        while pending:
            done, _ = await asyncio.to_thread(ray.wait, list(pending), num_returns=1, timeout=0.2)
            if should_stop() and not stopped:
                self.stop()
                stopped = True
            for ref in done:
                w = pending.pop(ref)
                try:
                    report, data, bodies = ray.get(ref)
                except Exception as exc:  # the actor or its node died: named, its requests not sent
                    lost.append(f"worker {w} on node {self.offsets[w].node[:12]} lost: {type(exc).__name__}")
                    reports.append(WorkerReport(worker=w, error="lost"))
                    continue
                reports.append(WorkerReport.model_validate_json(report))
                records += [RequestRecord.model_validate_json(line) for line in data.splitlines() if line]
                self.bodies[w].write_bytes(bodies)  # where the coordinator's digest reads a worker's bodies
        reports.sort(key=lambda r: r.worker)
        records.sort(key=lambda r: r.index)
        return Outcome(
            records, reports, self.t0, self.started_at, lost=lost, executor="ray", clock_offsets=self.offsets,
            bodies_digest=self._bodies_digest(records),
        )  # fmt: skip


def _offset(ray, actor, worker: int, node: str) -> ClockOffset:
    best = None
    for _ in range(ROUND_TRIPS):
        sent = time.time()
        theirs = ray.get(actor.clock.remote())
        back = time.time()
        if best is None or back - sent < best[0]:
            best = (back - sent, theirs - (sent + back) / 2)
    rtt, offset = best
    return ClockOffset(
        worker=worker,
        node=node,
        offset_ms=1000 * offset,
        uncertainty_ms=1000 * rtt / 2,
        round_trips=ROUND_TRIPS,
    )
