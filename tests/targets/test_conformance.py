"""The conformance preflight's verdicts against the mock server's switches (each engine's documented
behaviour, known truth): a server that would void the measurement is refused with the cause and the remedy
in one line; a milder deviation is measured and stated."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from probes.load.client import Endpoint
from probes.targets import TargetError
from probes.targets.conformance import CHECK_TOKENS, PROMPT, Reply, check, judge
from probes.targets.engines import identify
from probes.targets.mock_server import MockServerConfig, running

pytestmark = pytest.mark.system  # each check runs the mock server for 1-2 s

# itl 15 ms: a 32-token stream lasts ~0.5 s, long enough for the overlapping request to arrive within it.
TIMING = {"ttft_ms": 5, "itl_ms": 15}


def _preflight(kind: str = "completions", ignore_eos: bool = True, tokenizer: str | None = None, **switches):
    with running(MockServerConfig(**TIMING, **switches)) as url:
        identity, _ = identify(url, {}, "mock-model")
        found = check(Endpoint(url, "mock-model", kind, None, ignore_eos), identity, tokenizer, ignore_eos)
    return {c.name: c.verdict for c in found.checks}, found


def test_vllm_conforms_everywhere():
    verdicts, found = _preflight()
    assert verdicts == {
        "streaming": "conforms", "done_event": "conforms", "stream_usage": "conforms", "finish_reason": "conforms",
        "ignore_eos": "conforms", "concurrency": "conforms", "tokenizer": "not checked",
    }  # fmt: skip
    assert found.requests == 3 and found.engine.engine == "vllm"


def test_llama_cpp_python_default_is_refused_with_its_remedy():
    with pytest.raises(TargetError) as err:
        _preflight(engine="llama-cpp-python")
    line = str(err.value)
    assert line.startswith("target: llama-cpp-python server cuts running streams when a new request arrives")
    assert line.endswith("; start it with --interrupt_requests False") and "\n" not in line


def test_llama_cpp_python_without_interrupts_is_measured_and_states_no_usage():
    verdicts, _ = _preflight(engine="llama-cpp-python", interrupts=False, ignore_eos=False)
    assert verdicts["concurrency"] == "conforms" and verdicts["stream_usage"] == "deviates"
    assert verdicts["ignore_eos"] == "not checked"


def test_transformers_serve_without_done_is_a_deviation_not_a_void():
    verdicts, found = _preflight(engine="transformers-serve", ignore_eos=False)
    assert verdicts["done_event"] == "deviates" and verdicts["finish_reason"] == "conforms"
    assert [c.name for c in found.deviations()] == ["done_event"]


def test_plain_json_reply_is_refused():
    with pytest.raises(TargetError, match="answers a streamed request with one JSON reply"):
        _preflight(ignores_stream=True)


def test_neither_done_nor_finish_reason_is_refused():
    with pytest.raises(TargetError, match="neither data: \\[DONE\\] nor a finish_reason"):
        _preflight(send_done=False, finish_reason=False)


def test_no_finish_reason_alone_is_stated():
    verdicts, _ = _preflight(finish_reason=False)
    assert verdicts["finish_reason"] == "deviates" and verdicts["done_event"] == "conforms"


def test_ignore_eos_not_honoured_is_stated():
    verdicts, found = _preflight(eos_after=5, honours_ignore_eos=False)
    assert verdicts["ignore_eos"] == "deviates"
    assert f"max_tokens {CHECK_TOKENS}, the reply had 5 tokens" in found.checks[4].detail
    assert verdicts["concurrency"] == "conforms"  # replies ending at EOS are not cut ones


def test_tokenizer_agreement(tmp_path):
    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    agree, _ = _preflight(tokenizer=str(path))  # the mock counts words, as this tokenizer does
    differ, found = _preflight(tokenizer=str(path), prompt_tokens_extra=3)
    chat, _ = _preflight(kind="chat", tokenizer=str(path))
    assert agree["tokenizer"] == "conforms" and differ["tokenizer"] == "deviates"
    words = len(PROMPT.split())
    assert f"the server counts {words + 3} prompt tokens, the tokenizer {words}" in found.checks[-1].detail
    assert chat["tokenizer"] == "not checked"


def test_a_cut_told_from_an_eos_by_finish_reason():
    """Pure judgement on known replies: a short overlapping reply that ended with a finish_reason is not cut."""
    _, found = _preflight()
    alone = Reply(status=200, streamed=True, done=True, finish="length", completion_tokens=32, ended_at=1)
    eos = Reply(status=200, streamed=True, done=True, finish="stop", completion_tokens=7, ended_at=3)
    cut = Reply(status=200, streamed=True, done=True, finish=None, chunks=7, sent_at=0, ended_at=3)
    second = Reply(status=200, streamed=True, done=True, finish="length", completion_tokens=32, sent_at=2)
    verdict = {c.name: c.verdict for c in judge(alone, eos, second, found.engine, None, True, False)}
    assert verdict["concurrency"] == "conforms"
    verdict = {c.name: c.verdict for c in judge(alone, cut, second, found.engine, None, True, False)}
    assert verdict["concurrency"] == "voids"
    early = Reply(status=200, streamed=True, done=True, finish="length", completion_tokens=32, ended_at=1)
    verdict = {c.name: c.verdict for c in judge(alone, early, second, found.engine, None, True, False)}
    assert verdict["concurrency"] == "not checked"  # the first ended before the second was sent
