"""How a `factsheet` command stops on SIGTERM or SIGINT: within a second, exit 143 or 130, nothing
half-written.

The handler raises in the main thread (KeyboardInterrupt, or `Terminated` for SIGTERM), so a command
unwinds as on Ctrl-C: `finally` blocks run, a vLLM server is released (its lifeline closes), atomic writes
remove their temporaries. Two things made stopping slow, and both are cut short here:

- Python's own shutdown once the command has unwound: freeing a large render (weasyprint's boxes, cffi
  objects) took 1.5–4 s after a SIGTERM in a 200-load-point render. `finish` runs the exit handlers, flushes
  the output and ends the process with `os._exit`, skipping that teardown;
- a command that does not unwind in time (a long C call, a clean-up that waits): a timer ends the process
  DEADLINE_S after the signal, once it has removed the temporaries being written. The kernel then closes a
  vLLM lifeline's write end, and the lifeline wrapper stops the server's process group.

While a group of files is being put in place (`probes.core.files.together`) the signal is put off until the
group is complete, so a render leaves the old set of files or the new one.

The handler runs only when the main thread next runs Python, and only while it is still the handler: a
library blocked in C (ray.init retrying a silent cluster for minutes) holds it back, and a library may put
its own in its place (ray.init's `sys.exit(15)`). So the deadline is also kept by a watchdog thread woken by
the signal itself (`signal.set_wakeup_fd`: the interpreter's C-level handler writes the signal's number to a
pipe the moment it arrives): DEADLINE_S later, if the tool's handler has not acted and no group of files is
being put in place, the process ends with 143 / 130 as above (a build stopped while Ray connected took 18 to
33 s and exited 15 before).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading

import probes.core.files as files

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + the signal number, as a shell reports it
DEADLINE_S = 0.8  # unwinding normally takes milliseconds; the rest of the second is for the host


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised as Ctrl-C's KeyboardInterrupt is, so whatever cleans up on Ctrl-C cleans up here."""


_received: list[int] = []  # acted on by the tool's handler
_arrived: list[int] = []  # seen by the watchdog, whichever handler ran (or none yet)
_watching: list[int] = []  # the wakeup pipe's write end, once watched


def install() -> None:
    """Handle SIGTERM and SIGINT in this process (the command line only: never on import)."""
    _watch()  # first: once a handler is in place, a signal may interrupt what follows
    for signum in EXIT_CODES:
        signal.signal(signum, _handler)


def _watch() -> None:
    if _watching:
        return
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    _watching.append(write)
    # A forked child (a worker, a sandbox) inherits the pipe but not this thread: its signals are its own.
    os.register_at_fork(after_in_child=_unwatch)
    threading.Thread(target=_watchdog, args=(read,), name="stop-deadline", daemon=True).start()


def _unwatch() -> None:
    with contextlib.suppress(ValueError):  # forked from a thread other than the main one
        signal.set_wakeup_fd(-1)


def _watchdog(read: int) -> None:
    while data := os.read(read, 64):
        for signum in data:
            if signum in EXIT_CODES:
                _arrived.append(signum)
                timer = threading.Timer(DEADLINE_S, _deadline)
                timer.daemon = True
                timer.start()


def _deadline() -> None:
    """DEADLINE_S after a stop signal arrived: end the process unless the tool's handler took it (its own
    timer keeps the deadline then) or a group of files is being put in place (the signal is raised again,
    and watched again, when the group is complete)."""
    if not _received and not files.writing_group():
        _force_exit(EXIT_CODES[_arrived[0]])


def stopped_code() -> int | None:
    """The exit code of the first stop signal that arrived, or None when none did."""
    first = _received or _arrived
    return EXIT_CODES[first[0]] if first else None


def exit_code(exc: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 143 for SIGTERM."""
    return EXIT_CODES[signal.SIGTERM] if isinstance(exc, Terminated) else EXIT_CODES[signal.SIGINT]


def _handler(signum: int, frame) -> None:
    if files.put_off(signum):
        return
    first = not _received
    _received.append(signum)
    if not first:
        return  # already stopping: a second Ctrl-C must not break off the clean-up the first one started
    timer = threading.Timer(DEADLINE_S, _force_exit, (EXIT_CODES[signum],))
    timer.daemon = True
    timer.start()
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _force_exit(code: int) -> None:
    files.remove_in_flight()
    with contextlib.suppress(OSError):  # a raw write: the main thread may hold the console's locks
        os.write(2, f"stopped: the command did not unwind within {DEADLINE_S:g} s\n".encode())
    os._exit(code)


def finish(code: int) -> None:
    """End the process with `code`. After a stop signal, without Python's teardown (see above)."""
    if stopped_code() is None:
        sys.exit(code)
    atexit._run_exitfuncs()  # what os._exit would skip: temporary folders' finalizers, log flushing
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
