"""`factsheet ARGS` as a process of its own, forked from one that has already imported the tool.

The hostile tests run the CLI as a separate process (a memory cap, a timeout, its own exit code), about a
hundred times a run. A fresh interpreter spends about 1.3 s of CPU importing the tool before it reads its
first argument; on the suite's 2 cores that CPU is taken from the other worker. Here one server process per
pytest worker imports the tool once (this checkout's code and package data), then forks a child per call.
The child is what a fresh `python -m factsheet ARGS` would be after its imports: its own environment,
working folder, address-space cap, standard streams and exit code; the server kills it at the timeout.
Nothing the tool does on import depends on the environment a call gives (the settings are read per call).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The server: single-threaded when it forks. Requests on stdin, answers on the descriptor its stdout had;
# its own stdout then goes to /dev/null, so that nothing a child inherits can write into the answers.
_SERVER = r"""
import json, os, resource, runpy, sys, time, traceback
sys.path[:0] = [ROOT]
from tests.support.package_data import map_package_data
map_package_data()
import factsheet.cli.commands  # the imports every child would otherwise make

answers = os.fdopen(os.dup(1), "w")
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 1)


def child(req):
    resource.setrlimit(resource.RLIMIT_AS, (req["memory_cap"], req["memory_cap"]))
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    os.dup2(null, 0)
    os.dup2(os.open(req["stdout"], os.O_WRONLY), 1)
    os.dup2(os.open(req["stderr"], os.O_WRONLY), 2)
    sys.argv = ["factsheet", *req["argv"]]
    code = 0
    try:
        runpy.run_module("factsheet", run_name="__main__", alter_sys=True)
    except SystemExit as exc:  # as the interpreter maps it: None 0, an int itself, anything else printed, 1
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code & 0xFF)


for line in sys.stdin:
    req = json.loads(line)
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        answers.close()
        child(req)
    deadline = time.monotonic() + req["timeout"]
    timed_out = False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            _, status, usage = os.wait4(pid, 0)
            timed_out = True
            break
        time.sleep(0.005)
    code = os.waitstatus_to_exitcode(status) if not timed_out else None
    cpu_s = usage.ru_utime + usage.ru_stime
    answers.write(json.dumps({"returncode": code, "timed_out": timed_out, "cpu_s": cpu_s}) + "\n")
    answers.flush()
""".replace("ROOT", repr(str(ROOT)))


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


class _Server:
    def __init__(self, env: dict[str, str]) -> None:
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
            cwd=ROOT, text=True,
        )  # fmt: skip

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # its loop ends, and it exits
        self.proc.wait(30)

    def run(self, request: dict) -> dict:
        with self.lock:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the CLI server ended (exit {self.proc.wait()})")
        return json.loads(answer)


# The CPU of every child so far: the server reaps them, so the worker's own RUSAGE_CHILDREN never sees it
# (tests/support/cpu_ledger.py adds it).
children_cpu_s = [0.0]
_server: list[tuple[tuple, _Server]] = []  # this worker's one server and the environment it started with


VOLATILE = {"PYTEST_CURRENT_TEST"}  # set by pytest for each test; the tool never reads it


def _server_for(env: dict[str, str]) -> _Server:
    key = tuple(sorted((k, v) for k, v in env.items() if k not in VOLATILE))
    if _server and _server[0][0] != key:  # another environment: a fresh server, as imports may read it
        _server.pop()[1].close()
    if not _server:
        _server.append((key, _Server(env)))
    return _server[0][1]


def run_cli(args: list, *, env: dict[str, str], timeout: float, memory_cap: int, cwd: Path = ROOT) -> Ran:
    """`factsheet ARGS` in a child forked from this worker's CLI server, with `env` as its whole environment,
    at most `memory_cap` bytes of address space and `timeout` seconds (subprocess.TimeoutExpired past it)."""
    server = _server_for(env)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="factsheet-cli-") as folder:
        out, err = Path(folder) / "stdout", Path(folder) / "stderr"
        out.touch()
        err.touch()
        answer = server.run({
            "argv": [str(a) for a in args], "env": env, "cwd": str(cwd), "timeout": timeout,
            "memory_cap": memory_cap, "stdout": str(out), "stderr": str(err),
        })  # fmt: skip
        children_cpu_s[0] += answer["cpu_s"]
        if answer["timed_out"]:
            raise subprocess.TimeoutExpired(["factsheet", *map(str, args)], timeout)
        # as subprocess.run(text=True) decodes: UTF-8 here, strict, universal newlines
        return Ran(answer["returncode"], out.read_text(), err.read_text(), time.monotonic() - start)
