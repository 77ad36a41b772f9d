"""The process of a server on this host, found by the TCP port it listens on (/proc/net/tcp{,6} and each
process's open sockets): an endpoint target run locally is booked as the server's CPU, not as other load."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

from probes.hostload.meter import PROC, process_tree, processes

LISTEN = "0A"  # the TCP state /proc/net/tcp writes for a listening socket


def local_port(base_url: str) -> int | None:
    """The port of `base_url` when its host is this machine (a loopback address or one of its own names)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if host == "localhost":
        return port
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return port if host in (socket.gethostname(), socket.getfqdn()) else None
    return port if address.is_loopback or address.is_unspecified else None


def _listening_inodes(port: int, proc: Path) -> set[str]:
    inodes = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == LISTEN and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def listening_pid(port: int, proc: Path = PROC) -> int | None:
    """The process that listens on `port` (the root of the processes that share the socket: a server's workers
    inherit it), None when none is readable or it is this tool's own process tree (an in-process server)."""
    wanted = {f"socket:[{inode}]" for inode in _listening_inodes(port, proc)}
    if not wanted:
        return None
    holders = set()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            links = {os.readlink(fd) for fd in (entry / "fd").iterdir()}
        except OSError:  # gone, or not ours to read
            continue
        if links & wanted:
            holders.add(int(entry.name))
    procs = processes(proc)
    roots = sorted(p for p in holders if procs.get(p, (0, 0))[0] not in holders)
    mine = process_tree(procs, os.getpid())
    roots = [p for p in roots if p not in mine and os.getpid() not in process_tree(procs, p)]
    return roots[0] if roots else None


def local_server_pid(base_url: str, proc: Path = PROC) -> int | None:
    port = local_port(base_url)
    return listening_pid(port, proc) if port is not None else None
