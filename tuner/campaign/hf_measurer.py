"""Measure one configuration of the transformers `GenerationConfig` feature model in-process, on CPU.

A worker process (tuner/campaign/hf_worker.py, run by the serving environment's python: the tool itself
never imports torch) loads the embedded model once — the Hugging Face folder `probes.targets.model_source
.prepare` makes from the packaged GGUF for vLLM, no hub download — and reloads only when the configuration's
`model` options (dtype) change. The worker runs under the lifeline wrapper (probes/targets/lifeline.py), so
it dies with the tool however the tool dies.

Per measurement: `requests` fixed prompts (the same for every configuration, so differences are the
configuration's), generated one after another with the configuration's GenerationConfig kwargs, which the
worker first checks with `GenerationConfig.validate(strict=True)`. The worker's timings become the load
probe's request records (`worker_records`), and the figures come from them the way the vLLM measurer's do
(`tuner.campaign.latency`). Figures (milliseconds):

    ttft_p50_ms, ttft_p90_ms, tpot_p50_ms, e2el_p50_ms, e2el_p90_ms, e2el_max_ms   over the requests
                     (n = n_requests; percentiles and CIs of the load probe, records in the measurement)
    tokens_mean      generated tokens per request
    cpu_s            resource proxy: CPU-seconds (user + system, all threads) of the worker process over the
                     requests — not energy
    load_s           model (re)load time before this measurement (0 when the loaded model was reused)
    host_load_1m     the host's 1-minute load average at the end (context for the noise, not a target)
    energy           'not measured' with the reason (no energy counters on a host without RAPL/NVML)

A configuration the library rejects or cannot run is recorded with `error` and no latency figures.

With `accuracy: {tasks: N, max_tokens: M, mode: chat|completion}` (tuner.campaign.accuracy.AccuracyOptions)
each measurement then generates one program per task of the stated HumanEval+ subset with the configuration's
kwargs (its max_new_tokens capped at M; end-of-sequence allowed) and judges them in the sandbox: pass_at_1,
pass_at_1_base, graded_base_share, graded_plus_share, with the per-task records (verdict, inputs passed, reply)
under "records", which the runner keeps in the measurement's file. These generations come after the latency
requests and after `cpu_s`: the latency figures and the proxy never include them.

    measurer: tuner.campaign.hf_measurer:from_options
    options: {spec: models/smollm2-cpu.yaml, requests: 2, fixed_length: true,
              accuracy: {tasks: 5, max_tokens: 256, mode: chat}}
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import yaml

from probes.core.measurement import MS_PER_S
from probes.load.records import RequestRecord
from probes.targets import lifeline
from probes.targets.errors import TargetError
from probes.targets.model_source import prepare
from probes.targets.vllm import VllmTarget
from tuner.campaign.accuracy import AccuracyOptions, AccuracySubset, judge_subset, load_subset
from tuner.campaign.latency import measured
from tuner.features.configs import bundled_text

WORKER = Path(__file__).with_name("hf_worker.py")
SOURCE = "transformers generate in-process (tuner/campaign/hf_worker.py), first token by a stopping criterion"

# Short completion prompts (written for this measurer); the same ones for every configuration.
PROMPTS = (
    'def fibonacci(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n',
    'def is_palindrome(text: str) -> bool:\n    """Return True if text reads the same both ways."""\n',
    'def count_vowels(word: str) -> int:\n    """Count the vowels in word."""\n',
    'def merge_sorted(a: list, b: list) -> list:\n    """Merge two sorted lists into one sorted list."""\n',
)


# What transformers 5.19's `generate` refuses on this runner (CPU torch, no hub at run time) although
# `GenerationConfig.validate(strict=True)` accepts it: hard constraints of the runner, not of the library's
# configuration model, so they are added to feature model (a) for this runner (`runner_model_text`).
RUNNER_CONSTRAINTS = (
    (
        "!cache_implementation_offloaded",
        "the offloaded cache needs CUDA (CPU torch: 'Torch not compiled with CUDA')",
    ),
    (
        "!DiverseBeam",
        "group beam search is a Hub custom_generate in transformers 5 (trust_remote_code and a download)",
    ),
    ("PromptLookup => !cache_implementation_static", "assisted generation refuses static cache classes"),
    ("PromptLookup => !NoKVCache", "assisted generation requires use_cache=True"),
)


def runner_model_text() -> str:
    """Feature model (a), generation_config.uvl, with this runner's constraints appended (UVL text)."""
    text = bundled_text("generation_config").rstrip("\n")
    lines = [f"    {c}    // runner (CPU, transformers generate): {why}" for c, why in RUNNER_CONSTRAINTS]
    return (
        text
        + "\n    // constraints of the in-process CPU runner (tuner/campaign/hf_measurer.py)\n"
        + "\n".join(lines)
        + "\n"
    )


class WorkerError(TargetError):
    """The generation worker could not start, died, broke the protocol or did not answer in time."""


def energy_reason() -> str:
    if Path("/sys/class/powercap").is_dir():
        return "not measured: this measurer reads no energy counters (resource proxy: cpu_s)"
    return "not measured: no energy counters on this host (no RAPL powercap, no GPU); resource proxy: cpu_s"


class HfWorker:
    """The worker process and its JSON-lines pipe; a context manager that always stops it."""

    def __init__(self, command: list[str], *, start_timeout_s: float = 300.0, grace_s: float = 5.0):
        self.command, self.start_timeout_s, self.grace_s = command, start_timeout_s, grace_s
        self.proc: subprocess.Popen | None = None
        self.ready: dict = {}
        self._state: Path | None = None
        self._lifeline: int | None = None
        self._sel: selectors.DefaultSelector | None = None
        self._buf = b""
        self._lock = threading.Lock()  # one request at a time on the pipe (accuracy may ask from threads)

    def start(self) -> HfWorker:
        self._state = Path(tempfile.mkdtemp(prefix="factsheet-hf-"))
        log = (self._state / "worker.log").open("wb")
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
        try:
            self.proc, self._lifeline = lifeline.spawn(
                self.command,
                grace_s=self.grace_s,
                state_dir=str(self._state),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
            )
        except OSError as exc:
            self.close()
            raise WorkerError(f"could not start the generation worker ({self.command[0]}): {exc}") from exc
        finally:
            log.close()
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            self.ready = self._read(self.start_timeout_s)
            if not self.ready.get("ready"):
                raise WorkerError(f"generation worker: unexpected first message {self.ready}")
        except BaseException:
            self.close()
            raise
        return self

    def __enter__(self) -> HfWorker:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc) -> None:
        self.close()

    def log_tail(self, lines: int = 8) -> str:
        path = self._state / "worker.log" if self._state else None
        if not path or not path.exists():
            return "(no worker log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def _read(self, timeout_s: float) -> dict:
        deadline = time.monotonic() + timeout_s
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerError(f"generation worker did not answer within {timeout_s:g} s")
            if not self._sel.select(min(left, 1.0)):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
                raise WorkerError(
                    f"generation worker exited (code {self.proc.returncode}):\n{self.log_tail()}"
                )
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            raise WorkerError(f"generation worker broke the protocol: {line[:200]!r}") from None

    def call(self, request: dict, timeout_s: float) -> dict:
        with self._lock:
            return self._call(request, timeout_s)

    def _call(self, request: dict, timeout_s: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            raise WorkerError(f"generation worker is not running:\n{self.log_tail()}")
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise WorkerError(f"generation worker exited:\n{self.log_tail()}") from None
        try:
            return self._read(timeout_s)
        except WorkerError:
            self.close()  # a late answer would be read as the next request's: never reuse this worker
            raise

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.poll() is None:
                try:
                    proc.stdin.write(b'{"op": "quit"}\n')
                    proc.stdin.flush()
                    proc.wait(self.grace_s)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            try:  # the wrapper and the worker: one process group
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            for f in (proc.stdin, proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass
        if self._sel is not None:
            self._sel.close()
            self._sel = None
        lifeline.release(self._lifeline, self._state)
        self._lifeline, self._state = None, None
        self._buf = b""


class HfMeasurer:
    def __init__(
        self,
        command: list[str],
        *,
        requests: int = 2,
        prompts: list | None = None,
        fixed_length: bool = True,
        timeout_s: float = 600.0,
        accuracy: AccuracyOptions | None = None,
        subset: AccuracySubset | None = None,
    ):
        prompts = list(prompts or PROMPTS)
        if not 1 <= requests <= len(prompts):
            raise ValueError(f"requests must be between 1 and {len(prompts)} (the prompts available)")
        self.command, self.requests, self.prompts = command, requests, prompts[:requests]
        self.fixed_length, self.timeout_s = fixed_length, timeout_s
        self.worker: HfWorker | None = None
        self._energy = energy_reason()
        self.accuracy = accuracy
        if accuracy is not None and subset is None:
            subset = load_subset(accuracy.tasks, dataset=accuracy.dataset)
        self.subset = subset

    def _worker(self) -> HfWorker:
        if self.worker is None or self.worker.proc is None:
            self.worker = HfWorker(self.command).start()
        return self.worker

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def generate(
        self, kwargs: dict, prompts: list, *, seed: int, texts: bool = False, fixed_length=None
    ) -> dict:
        """One worker request: the configuration's kwargs applied to `prompts` (the worker's answer)."""
        request = {
            "op": "generate",
            "model": kwargs.get("model", {}),
            "generation": kwargs.get("request", {}),
            "prompts": prompts,
            "fixed_length": self.fixed_length if fixed_length is None else fixed_length,
            "seed": seed,
            "texts": texts,
        }
        return self._worker().call(request, self.timeout_s)

    def measure(self, kwargs: dict, *, seed: int) -> dict:
        answer = self.generate(kwargs, self.prompts, seed=seed)
        if not answer.get("ok"):
            return {
                "error": f"{answer.get('kind')}: {answer.get('error')}",
                "n_requests": 0,
                "energy": self._energy,
            }
        figures = measured(worker_records(answer["results"]), source=SOURCE)
        figures.update(
            cpu_s=answer["cpu_s"],
            load_s=answer["load_s"],
            host_load_1m=os.getloadavg()[0],
            energy=self._energy,
        )
        if self.accuracy is not None:
            figures.update(self._accuracy(kwargs, seed))
        return figures

    def _accuracy(self, kwargs: dict, seed: int) -> dict:
        """The subset's programs, generated with the configuration's kwargs (max_new_tokens capped), judged."""
        opts = self.accuracy
        request = dict(kwargs.get("request", {}))
        request["max_new_tokens"] = min(request.get("max_new_tokens", opts.max_tokens), opts.max_tokens)
        capped = {**kwargs, "request": request}

        def generate(_task, prompt, task_seed: int) -> str:
            answer = self.generate(capped, [prompt], seed=task_seed, texts=True, fixed_length=False)
            if not answer.get("ok"):
                raise RuntimeError(f"{answer.get('kind')}: {answer.get('error')}")
            return answer["results"][0]["text"]

        return judge_subset(self.subset, opts, seed, generate)


def worker_records(results: list[dict]) -> list[RequestRecord]:
    """The worker's per-prompt timings as the load probe's request records. The worker generates its prompts
    one after another and times each from before tokenization (so a request's send is the previous one's
    end: a closed loop at concurrency 1); the first-token and end times are its TTFT and E2EL after that
    send, and its output tokens are the generated token ids (exact, as a server's usage count is)."""
    records, sent = [], 0.0
    for i, r in enumerate(results):
        end = sent + r["e2el_ms"] / MS_PER_S
        records.append(
            RequestRecord(
                index=i,
                sent_s=sent,
                first_chunk_s=sent + r["ttft_ms"] / MS_PER_S,
                end_s=end,
                output_tokens=r["tokens"],
                output_tokens_source="usage",
            )
        )
        sent = end
    return records


def worker_command(model_dir: str, python: str, threads: int | None = None) -> list[str]:
    return [python, str(WORKER), model_dir, str(threads or "")]


def from_options(
    spec: str | None = None,
    model_dir: str | None = None,
    python: str | None = None,
    requests: int = 2,
    fixed_length: bool = True,
    threads: int | None = None,
    timeout_s: float = 600.0,
    command: list[str] | None = None,
    accuracy: dict | None = None,
) -> HfMeasurer:
    """From a factsheet build spec's vLLM target (its model source and serving python), or a local HF folder
    (`model_dir`) and `python`; `command` replaces the worker command entirely (tests)."""
    if command is None:
        if spec is not None:
            try:
                data = yaml.safe_load(Path(spec).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
                raise ValueError(f"{spec}: not a readable build spec ({type(exc).__name__})") from None
            if not isinstance(data, dict) or (data.get("target") or {}).get("kind") != "vllm":
                raise ValueError(f"{spec}: needs a 'target' of kind vllm (its model and serving python)")
            target = VllmTarget.model_validate(data["target"])
            python = python or target.serving_python()
            model_dir = model_dir or prepare(target.model, python).served_path
        if model_dir is None or python is None:
            raise ValueError("give 'spec', or 'model_dir' and 'python' (the serving environment's)")
        command = worker_command(model_dir, python, threads)
    acc = AccuracyOptions.from_option(accuracy)
    return HfMeasurer(
        command, requests=requests, fixed_length=fixed_length, timeout_s=timeout_s, accuracy=acc
    )
