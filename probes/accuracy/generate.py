"""Generation through an OpenAI-compatible endpoint (non-streaming, httpx)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from probes.accuracy.dataset import HumanEvalTask
from probes.accuracy.sanitize import defines, extract_code

# Codex-paper stop sequences plus a closing fence; vLLM rejects more than 4, the rest apply here.
STOP_SEQUENCES = ("\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#", "\n```")
_SERVER_STOPS = 4
CHAT_INSTRUCTION = (
    "Please provide a self-contained Python script that solves the following problem in a markdown "
    "code block:\n```python\n{prompt}\n```\n"
)
PROMPTING = {
    "chat": "EvalPlus instruction ('Please provide a self-contained Python script that solves the following "
    "problem in a markdown code block') + task prompt as one user message to /v1/chat/completions; "
    "program = imports, defs and assignments of the fenced block defining the entry point (prompt "
    "prepended when the reply lacks the function)",
    "completion": "task prompt to /v1/completions, stop at "
    + ", ".join(repr(s) for s in STOP_SEQUENCES)
    + f" (first {_SERVER_STOPS} server-side, rest client-side); program = prompt + completion",
}


@dataclass(frozen=True)
class Generation:
    task: HumanEvalTask
    sample: int
    reply: str | None
    program: str
    error: str | None


def truncate_at_stops(text: str) -> str:
    cut = min((i for s in STOP_SEQUENCES if (i := text.find(s)) >= 0), default=len(text))
    return text[:cut]


def chat_program(task: HumanEvalTask, reply: str) -> str:
    code = extract_code(reply, task.entry_point)
    if defines(code, task.entry_point):
        return code
    return task.prompt + code  # the reply held only a body or helpers


def request_for(task: HumanEvalTask, mode: str) -> tuple[str, dict]:
    """(endpoint path under /v1, the body's prompt part) for one task: the one prompt builder, shared by
    the probe and the campaign's accuracy measurement."""
    if mode == "chat":
        messages = [{"role": "user", "content": CHAT_INSTRUCTION.format(prompt=task.prompt.strip())}]
        return "/chat/completions", {"messages": messages}
    return "/completions", {"prompt": task.prompt, "stop": list(STOP_SEQUENCES[:_SERVER_STOPS])}


def program_from_reply(task: HumanEvalTask, text: str, mode: str) -> str:
    """The program judged for a reply: extracted from a chat reply, or prompt + completion up to a stop."""
    return chat_program(task, text) if mode == "chat" else task.prompt + truncate_at_stops(text)


async def generate_all(
    client: httpx.AsyncClient,
    model: str,
    tasks: list[HumanEvalTask],
    *,
    mode: str,
    n: int,
    params: dict,
    max_tokens: int,
    concurrency: int,
    progress: Callable[[int, int], None] | None = None,
) -> list[Generation]:
    """`params`: the sampling parameters sent with every request (temperature, top_p, top_k, ...)."""
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def _task(task: HumanEvalTask) -> list[Generation]:
        nonlocal done
        async with gate:
            gens = await _generate(client, model, task, mode, n, params, max_tokens)
        done += 1
        if progress:
            progress(done, len(tasks))
        return gens

    nested = await asyncio.gather(*(_task(t) for t in tasks))
    return [g for gens in nested for g in gens]


async def _generate(
    client: httpx.AsyncClient,
    model: str,
    task: HumanEvalTask,
    mode: str,
    n: int,
    params: dict,
    max_tokens: int,
) -> list[Generation]:
    path, prompt = request_for(task, mode)
    body: dict = {"model": model, "n": n, **params, "max_tokens": max_tokens, **prompt}
    try:
        response = await client.post(path, json=body)
        response.raise_for_status()
        texts = [_choice_text(c, mode) for c in response.json()["choices"]]
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
        error = f"{type(exc).__name__}: {exc}"[:500]
        return [Generation(task, i, None, task.prompt, error) for i in range(n)]
    texts = (texts + [None] * n)[:n]
    return [_generation(task, i, text, mode) for i, text in enumerate(texts)]


def _choice_text(choice: dict, mode: str) -> str:
    text = choice["message"]["content"] if mode == "chat" else choice["text"]
    if not isinstance(text, str):
        raise TypeError("reply text is not a string")
    return text


def _generation(task: HumanEvalTask, index: int, text: str | None, mode: str) -> Generation:
    if text is None:
        return Generation(task, index, None, task.prompt, "endpoint returned fewer choices than n")
    return Generation(task, index, text, program_from_reply(task, text, mode), None)
