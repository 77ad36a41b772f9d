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


_received: list[int] = []


def install() -> None:
    """Handle SIGTERM and SIGINT in this process (the command line only: never on import)."""
    for signum in EXIT_CODES:
        signal.signal(signum, _handler)


def stopped_code() -> int | None:
    """The exit code of the first stop signal received, or None when none was."""
    return EXIT_CODES[_received[0]] if _received else None


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
    if not _received:
        sys.exit(code)
    atexit._run_exitfuncs()  # what os._exit would skip: temporary folders' finalizers, log flushing
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
