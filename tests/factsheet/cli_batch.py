"""Many `factsheet` command lines in one process: `python cli_batch.py < cases.json > results.json`.

Why: starting the CLI costs 3-6 s on a busy 2-core host (its imports), so the bad-input walk (a process a
case, ~190 cases) took over 10 minutes; here the imports are paid once. Each case still runs the real entry
point (`factsheet.cli.commands.main`, so click's usage errors, `guarded` and the exit codes are the command's own),
with its stdout and stderr captured, and a per-case alarm so that a case that hangs (a FIFO opened for
reading) is reported as "timeout" instead of blocking the batch. Input: a JSON list of argument lists;
output: a JSON list of {"code", "stdout", "stderr"}.
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
import sys
import traceback

CASE_TIMEOUT_S = 60


def _alarm(*_):
    raise TimeoutError(f"no answer within {CASE_TIMEOUT_S} s (hung?)")


def run_case(argv: list[str]) -> dict:
    from factsheet.cli.commands import main

    out, err = io.StringIO(), io.StringIO()
    code: int | str
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_TIMEOUT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            sys.argv = ["factsheet", *argv]
            main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except TimeoutError as exc:
        code, _ = "timeout", err.write(str(exc))
    except BaseException:  # noqa: BLE001 - whatever escapes main is a bug of the case, reported as such
        code, _ = "escaped", err.write(traceback.format_exc())
    finally:
        signal.alarm(0)
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


if __name__ == "__main__":
    cases = json.load(sys.stdin)
    json.dump([run_case(argv) for argv in cases], sys.__stdout__)
