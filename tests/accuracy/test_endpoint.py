"""Generation through a fake OpenAI-compatible server, and the pinned-digest download."""

import asyncio
import gzip
import hashlib

import pytest

from probes.accuracy import AccuracyError, HumanEvalSpec, SubsetSpec, run_humaneval
from probes.accuracy.dataset import HUMANEVALPLUS_FILE, load_dataset
from tests.support.fake_http import FakeHandler, serving, serving_release
from tests.support.humaneval_path import DATASET, task_in

pytestmark = pytest.mark.system


class _FakeLLM(FakeHandler):
    seen: list = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = self.read_json()
        type(self).seen.append((self.path, body))
        text = body["messages"][0]["content"] if "messages" in body else body["prompt"]
        record = task_in(text)
        if self.path.endswith("/chat/completions"):
            # Instruct-style reply: prose, then the whole function in a fence, then an example call.
            code = record["prompt"] + record["canonical_solution"] + "\nprint('example')\n"
            choice = {
                "message": {"role": "assistant", "content": f"Here you go:\n```python\n{code}```\nDone."}
            }
        else:
            choice = {"text": record["canonical_solution"] + "\n\n\ndef extra():\n    pass\n"}
        self.reply_json({"choices": [choice] * body["n"]})


@pytest.mark.parametrize("mode", ["chat", "completion"])
def test_run_humaneval_through_endpoint(mode, small_dataset):
    config = HumanEvalSpec(
        mode=mode,
        dataset=str(small_dataset),
        subset=SubsetSpec(first=3),
        n_samples=2,
        sampling={"top_k": 5, "repetition_penalty": 1.1},
    )
    with serving(_FakeLLM) as url:
        result = asyncio.run(run_humaneval(f"{url}/v1", "fake", config))
    assert result.pass_rates.plus == {"pass@1": 1.0, "pass@2": 1.0}
    assert result.pass_rates.n_tasks == 3 and len(result.per_task) == 6
    assert result.subset == "first 3 of 10 tasks in dataset order"
    assert result.generation_failures == 0 and result.isolation
    # Every sampling parameter reaches the server, not only temperature and top_p.
    sent = _FakeLLM.seen[-1][1]
    assert (sent["temperature"], sent["top_p"], sent["top_k"], sent["repetition_penalty"]) == (
        0.0,
        1.0,
        5,
        1.1,
    )
    assert result.sampling["top_k"] == 5
    if mode == "completion":
        assert len(_FakeLLM.seen[-1][1]["stop"]) <= 4
        assert "def extra" not in result.per_task[0].program
    else:
        assert "print(" not in result.per_task[0].program


def test_sampling_cannot_override_what_the_probe_sets():
    with pytest.raises(ValueError, match="sampling: max_tokens, temperature"):
        HumanEvalSpec(sampling={"temperature": 0.5, "max_tokens": 3})


def test_unreachable_endpoint_counts_as_failing(small_dataset):
    config = HumanEvalSpec(dataset=str(small_dataset), subset=SubsetSpec(first=2), request_timeout_s=2)
    result = asyncio.run(run_humaneval("http://127.0.0.1:9/v1", "fake", config))
    assert result.generation_failures == 2
    assert result.pass_rates.base == {"pass@1": 0.0}


def test_download_verifies_pinned_digest(monkeypatch, tmp_path):
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(tmp_path / "cache"))
    with serving_release(DATASET.read_bytes()) as url:
        monkeypatch.setenv("FACTSHEET_HUMANEVAL_URL_BASE", url)
        data = load_dataset()
    assert data.info.source.startswith("http://127.0.0.1")
    assert (tmp_path / "cache" / HUMANEVALPLUS_FILE).is_file()
    assert load_dataset().info.source == f"<cache>/{HUMANEVALPLUS_FILE}"  # now from cache (not by its path)


def test_download_with_wrong_digest_is_rejected(monkeypatch, tmp_path):
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(tmp_path / "cache"))
    tampered = gzip.compress(b'{"task_id": "HumanEval/0"}\n')
    with serving_release(tampered) as url:
        monkeypatch.setenv("FACTSHEET_HUMANEVAL_URL_BASE", url)
        with pytest.raises(AccuracyError, match=hashlib.sha256(tampered).hexdigest()):
            load_dataset()
    assert not (tmp_path / "cache" / HUMANEVALPLUS_FILE).exists()


def test_a_subset_computes_only_its_own_tasks_expected_outputs(small_dataset, tmp_path, monkeypatch):
    """A first run on a fresh host computes the canonical outputs it judges against: for a subset, those
    of its tasks only (the whole dataset's would take minutes a 10-task demo has no use for)."""
    from probes.accuracy.harness import _read_expected

    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(tmp_path))
    config = HumanEvalSpec(mode="chat", dataset=str(small_dataset), subset=SubsetSpec(first=2))
    with serving(_FakeLLM) as url:
        result = asyncio.run(run_humaneval(f"{url}/v1", "fake", config))
    assert result.pass_rates.plus == {"pass@1": 1.0}
    (cached,) = tmp_path.glob("expected-*.json.gz")
    assert sorted(_read_expected(cached)) == sorted(t.task_id for t in result.per_task)
    assert len(_read_expected(cached)) == 2
