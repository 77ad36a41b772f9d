import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from probes.load.workloads.workload import WorkloadConfig, WorkloadError, build_workload, synthetic_prompts

REPO = Path(__file__).resolve().parents[2]
HUMANEVAL = REPO.parent / "shared/data/humanevalplus/HumanEvalPlus-v0.1.10.jsonl.gz"


def test_synthetic_is_reproducible_and_digested():
    a = build_workload(WorkloadConfig(input_len=20, seed=4), 10)
    b = build_workload(WorkloadConfig(input_len=20, seed=4), 10)
    c = build_workload(WorkloadConfig(input_len=20, seed=5), 10)
    assert a.prompts == b.prompts and a.workload.prompts_digest == b.workload.prompts_digest
    assert a.workload.prompts_digest != c.workload.prompts_digest
    assert all(len(p.split()) == 20 for p in a.prompts)  # word fallback: one word per token
    assert a.output_lens == [64] * 10


def test_synthetic_lengths_are_exact_with_the_tokenizer(tokenizer_json):
    prompts, wl = synthetic_prompts(5, 50, seed=1, tokenizer_path=tokenizer_json)
    tok = Tokenizer.from_file(tokenizer_json)
    counts = [len(tok.encode(p, add_special_tokens=False).ids) for p in prompts]
    assert all(48 <= n <= 50 for n in counts), counts  # the longest word prefix that fits
    assert "tokenizer" in wl.length_method


def test_length_distributions_follow_their_spec():
    uni = build_workload(
        WorkloadConfig(input_len=100, output_len=40, length_distribution="uniform", length_spread=0.5), 2000
    )
    lens = np.array([len(p.split()) for p in uni.prompts])
    assert lens.min() >= 50 and lens.max() <= 150 and abs(lens.mean() - 100) < 3
    assert min(uni.output_lens) >= 20 and max(uni.output_lens) <= 60
    nrm = build_workload(WorkloadConfig(input_len=100, length_distribution="normal", length_spread=0.2), 2000)
    lens = np.array([len(p.split()) for p in nrm.prompts])
    assert abs(lens.std() - 20) < 2 and abs(lens.mean() - 100) < 2
    with pytest.raises(ValueError, match="length_spread"):  # pydantic wraps it, still a ValueError
        WorkloadConfig(length_spread=0.3)


@pytest.mark.skipif(not HUMANEVAL.is_file(), reason="HumanEval+ data not beside the repo")
def test_humaneval_prompts_cycle_in_a_seeded_order():
    built = build_workload(WorkloadConfig(source="humaneval", path=str(HUMANEVAL), output_len=32), 200)
    tasks = [json.loads(x)["prompt"] for x in gzip.decompress(HUMANEVAL.read_bytes()).decode().splitlines()]
    assert set(built.prompts) == set(tasks)  # 200 > 164: every task, then repeats
    assert built.prompts[164:] == built.prompts[:36]
    assert built.workload.file_digest.startswith("sha256:") and built.workload.source == "humaneval"


def test_user_jsonl_with_per_line_output_len(tmp_path):
    f = tmp_path / "w.jsonl"
    f.write_text('{"prompt": "hello", "output_len": 3}\n\n{"prompt": "bye"}\n')
    built = build_workload(WorkloadConfig(source="jsonl", path=str(f), output_len=9), 3)
    assert built.prompts == ["hello", "bye", "hello"] and built.output_lens == [3, 9, 3]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("not json\n", "line 1: not JSON"),
        ('{"text": "x"}\n', "line 1: needs a string field"),
        ('{"prompt": "x", "output_len": 0}\n', "output_len"),
    ],
)
def test_bad_user_jsonl_names_the_line(tmp_path, text, match):
    f = tmp_path / "w.jsonl"
    f.write_text(text)
    with pytest.raises(WorkloadError, match=match):
        build_workload(WorkloadConfig(source="jsonl", path=str(f)), 2)


def test_per_request_output_lens_reach_the_server():
    import asyncio

    from probes.load.point import SLO, LoadPoint
    from probes.load.runner import run_point
    from probes.targets.mock_server import MockServerConfig, running

    built = build_workload(
        WorkloadConfig(input_len=8, output_len=6, length_distribution="uniform", length_spread=0.5), 6
    )
    with running(MockServerConfig(ttft_ms=1, itl_ms=1)) as url:
        r = asyncio.run(
            run_point(
                url,
                "mock-model",
                LoadPoint(concurrency=2, num_requests=6),
                SLO(),
                prompts=built.prompts,
                workload=built.workload,
                output_lens=built.output_lens,
            )
        )
    assert [x.output_tokens for x in r.records] == built.output_lens
    assert r.workload.output_lens_digest == built.workload.output_lens_digest


@pytest.mark.skipif(not HUMANEVAL.is_file(), reason="HumanEval+ data not beside the repo")
def test_humaneval_default_path_is_found_from_anywhere(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert len(build_workload(WorkloadConfig(source="humaneval"), 3).prompts) == 3
