"""Run a server so that it dies with the tool, however the tool dies (kill -9 included).

The tool starts this file as a script (stdlib only: it runs under the tool's python, whatever the
serving environment is) in a new session, so it leads a process group that the server and every process
the server spawns (vLLM's API server, engine core, workers) belong to. The tool holds the write end of a
pipe, the *lifeline*; this wrapper holds the read end. The kernel closes the write end when the tool exits
for any reason, so the wrapper reads end-of-file and stops the whole group: SIGTERM, a grace period, then
SIGKILL (which ends the wrapper too). The server itself also gets a parent-death signal, so that if the
wrapper is killed on its own the server does not linger.

    python lifeline.py FD GRACE_S [STATE_DIR] -- COMMAND...

STATE_DIR (the server's temporary folder: its log and caches) is removed before the final SIGKILL,
since the tool that would have removed it is gone.
"""

from __future__ import annotations

import ctypes
import os
import select
import shutil
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def spawn(
    command: list[str], *, grace_s: float, state_dir: str, **popen_kwargs
) -> tuple[subprocess.Popen, int]:
    """Start `command` under this wrapper, in a new session whose group it leads, with `state_dir` as its
    working folder; returns the wrapper's process and the lifeline's write end (the caller keeps it open
    while the command should live, and closes it to stop the command's whole group)."""
    read_end, write_end = os.pipe()  # not inherited by other children (O_CLOEXEC)
    wrapper = [
        sys.executable,
        "-I",
        os.path.abspath(__file__),
        str(read_end),
        f"{grace_s:g}",
        state_dir,
        "--",
    ]
    try:
        proc = subprocess.Popen(
            [*wrapper, *command],
            start_new_session=True,  # its own process group: stopped as one, apart from the tool's
            pass_fds=(read_end,),
            cwd=state_dir,
            **popen_kwargs,
        )
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return proc, write_end


def release(write_end: int | None, state_dir: str | os.PathLike | None) -> None:
    """The tool's side of stopping: close the lifeline (the wrapper then stops the group) and remove the
    state folder (the wrapper removes it too if the tool cannot)."""
    if write_end is not None:
        os.close(write_end)
    if state_dir is not None:
        shutil.rmtree(state_dir, ignore_errors=True)


def parent_death_signal(sig: int = signal.SIGKILL) -> None:
    """Ask the kernel to send `sig` to this process when its parent thread exits (Linux; else a no-op)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


def _server_preexec() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # ignored signals survive exec: give the server its own
    parent_death_signal()


def _stop_group(child: subprocess.Popen, grace_s: float, state_dir: str | None) -> None:
    group = os.getpgrp()
    try:
        os.killpg(group, signal.SIGTERM)  # this wrapper ignores SIGTERM; the server shuts down cleanly
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace_s
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if state_dir:
        shutil.rmtree(state_dir, ignore_errors=True)
    os.killpg(group, signal.SIGKILL)  # the stragglers, and this wrapper with them


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") not in (2, 3) or argv.index("--") == len(argv) - 1:
        print("usage: lifeline.py FD GRACE_S [STATE_DIR] -- COMMAND...", file=sys.stderr)
        return 2
    split = argv.index("--")
    fd, grace_s, command = int(argv[0]), float(argv[1]), argv[split + 1 :]
    state_dir = argv[2] if split == 3 else None
    # The group gets the tool's SIGTERM on a normal stop: the server handles it, the wrapper waits.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        child = subprocess.Popen(command, preexec_fn=_server_preexec)
    except OSError as exc:
        print(f"lifeline: could not start {command[0]}: {exc}", file=sys.stderr)
        return 127
    # If the tool died while the server was starting, the pipe is already at end-of-file: stop at once.
    while True:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready and os.read(fd, 1) == b"":
            _stop_group(child, grace_s, state_dir)
            return 0  # not reached: SIGKILL above ends the wrapper
        code = child.poll()
        if code is not None:
            return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
