"""Real-vLLM tests start the shipped target with one engine process instead of three.

vLLM's CPU build starts an API server, an engine core and a worker, each importing torch and vLLM (about 36 s
of a 2-core host here). The uniprocess executor runs the worker inside the engine core, and
VLLM_ENABLE_V1_MULTIPROCESSING=0 the engine core inside the API server: 19.5 s to a served request, the same
weights served. A test of what the shipped deployment measures is unchanged by where vLLM's own
processes run. Only tests that start the server more than once use it: once started, one process serving
beside another busy test worker gets one share of the CPU where three get three (the campaign test, one
start, took 208 s in the suite this way, 146 s as shipped). The test that kills the tool and counts the
server's processes keeps the shipped layout.
"""

from __future__ import annotations

from typing import Any

ONE_PROCESS_ARGS = ["--distributed-executor-backend", "uni"]
ONE_PROCESS_ENV = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"}


def one_process(target: dict[str, Any]) -> dict[str, Any]:
    """The spec's `target` section (a dict), started as one process: its flags and environment added."""
    return {
        **target,
        "extra_args": [*target.get("extra_args", []), *ONE_PROCESS_ARGS],
        "env": {**target.get("env", {}), **ONE_PROCESS_ENV},
    }
