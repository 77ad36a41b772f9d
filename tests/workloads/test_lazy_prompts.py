"""synthetic, code and jsonl prompts are made when each request is due, never held as a list (issue 31 item 1),
and are the prompts the list-building code made, byte for byte: the digests below were recorded from that
code (main at 0c879a4) for these parameters, and `_listed` is that code's synthetic draw, kept here."""

import gzip
import json
import pickle

import numpy as np
import pytest

from probes.core.digests import sha256_bytes, sha256_file
from probes.load.client import Endpoint
from probes.load.drive import WorkItem
from probes.load.workloads.context import BuildContext
from probes.load.workloads.drawn import CHECKPOINT, CycledPrompts, DrawnPrompts
from probes.load.workloads.plan import Plan, digest_json
from probes.load.workloads.profiles import CodeProfile, JsonlProfile, SyntheticProfile
from probes.load.workloads.registry import build_plan
from probes.load.workloads.synthetic import workload_config
from probes.load.workloads.workload import (
    WORDS,
    WorkloadConfig,
    WorkloadError,
    _fit_to_tokens,
    build_workload,
    load_tokenizer,
)
from tests.support.humaneval_path import DATASET as HUMANEVAL
from tests.support.peak_memory import growth

# (profile, context) → prompts digest, output lengths digest, as main at 0c879a4 built them
SYNTHETIC = [
    (
        SyntheticProfile(),
        BuildContext(600, 4, 20, 8),
        "sha256:b77610fbb742d9f2e63fcee0b17bf6187d26e44333e138a309447648f9deab6a",
        None,
    ),
    (
        SyntheticProfile(length_distribution="uniform", length_spread=0.5),
        BuildContext(600, 3, 12, 6),
        "sha256:5303b1d9ac52c61ae9ef5dc5f2ea9c31e6c28ee28c131f96c900f4d26ddfd981",
        "sha256:49b0582dc50049c640874923e7d8112487958071daad27d31064c7b1fdf76741",
    ),
    (
        SyntheticProfile(length_distribution="normal", length_spread=0.2),
        BuildContext(300, 2, 30, 7),
        "sha256:52f73c7947e1dff7db4ce5be73da882ab3b0c7a5d97db6261c88ab627ce00c39",
        "sha256:1290caf8e6d9a39945c0da25fbbd1c0a593c3979884f50b2b463e4c80a604253",
    ),
]
# the SmolLM2 tokenizer.json the pinned tokenizer digests were drawn with
TOKENIZER = "sha256:bf346d64f6f0fbcefb4c1b6928a98241467dff36c6fbae5fe1785c4ff90667f4"


def _listed(spec: WorkloadConfig, count: int) -> tuple[list[str], list[int] | None]:
    """The synthetic prompts and output lengths as main at 0c879a4 drew them: every prompt into a list."""
    rng = np.random.default_rng(spec.seed)
    tok = load_tokenizer(spec.tokenizer_path)

    def lengths(mean):
        if spec.length_distribution == "uniform":
            lo, hi = round(mean * (1 - spec.length_spread)), round(mean * (1 + spec.length_spread))
            vals = rng.integers(max(1, lo), max(1, hi) + 1, size=count)
        elif spec.length_distribution == "normal":
            vals = np.rint(rng.normal(mean, spec.length_spread * mean, size=count))
        else:
            vals = np.full(count, mean)
        return [int(max(1, v)) for v in vals]

    prompts = []
    for n in lengths(spec.input_len):
        words = [WORDS[i] for i in rng.integers(0, len(WORDS), size=n)]
        prompts.append(_fit_to_tokens(words, n, tok) if tok else " ".join(words))
    return prompts, lengths(spec.output_len)


def _same_as_listed(plan, listed: list[str]) -> None:
    prompts = plan.prompts
    assert isinstance(prompts, DrawnPrompts | CycledPrompts)  # not a list
    n = len(listed)
    # out of order first (from the checkpoint before each), then in order, then as a worker receives them
    assert prompts[n - 1] == listed[-1] and prompts[CHECKPOINT + 3] == listed[CHECKPOINT + 3]
    assert (
        prompts[-2] == listed[-2]
        and prompts[CHECKPOINT - 2 : CHECKPOINT + 2] == listed[CHECKPOINT - 2 : CHECKPOINT + 2]
    )
    assert list(prompts) == listed and prompts == listed
    assert [prompts[i] for i in range(2, n, 3)] == listed[2::3]  # as worker 2 of 3 sends them
    assert list(pickle.loads(pickle.dumps(prompts))) == listed
    assert plan.workload.prompts_digest == digest_json(listed)


@pytest.mark.parametrize(
    ("profile", "ctx", "digest", "out_digest"), SYNTHETIC, ids=["fixed", "uniform", "normal"]
)
def test_synthetic_prompts_drawn_when_due_are_the_listed_ones(profile, ctx, digest, out_digest):
    plan = build_plan(profile, ctx)
    assert plan.workload.prompts_digest == digest and plan.workload.output_lens_digest == out_digest
    listed, out = _listed(workload_config(profile, ctx), ctx.count)
    _same_as_listed(plan, listed)
    assert plan.output_lens == (None if profile.length_distribution == "fixed" else out)
    # the requests digest a run records: of the bodies built from the prompts, as from the list
    work = lambda p: WorkItem(Endpoint("http://h", "m"), p, 8, keep_bodies=False)  # noqa: E731
    listed_plan = Plan(listed, plan.output_lens, plan.workload)
    assert work(plan).digest_of(list(range(ctx.count))) == work(listed_plan).digest_of(list(range(ctx.count)))
    built = build_workload(
        workload_config(profile, ctx), ctx.count
    )  # the spec's path (probe load --dataset synthetic)
    assert built.workload.prompts_digest == digest and built.output_lens == out


def test_synthetic_prompts_trimmed_by_a_tokenizer_are_the_listed_ones(tokenizer_json):
    profile = SyntheticProfile(length_distribution="uniform", length_spread=0.5)
    ctx = BuildContext(300, 1, 16, 8, tokenizer_json)
    plan = build_plan(profile, ctx)
    _same_as_listed(plan, _listed(workload_config(profile, ctx), ctx.count)[0])
    if sha256_file(tokenizer_json) == TOKENIZER:
        assert plan.workload.prompts_digest == (
            "sha256:2e9db51ee0c67b46821cb2f863d667123f5b5f1d8a54c75d2627ab71488a5e99"
        )
        assert plan.workload.output_lens_digest == (
            "sha256:5aeb368431ae41ee3a9e1a3079d922c4730350624f5acec2485ba263c6ae8536"
        )


@pytest.mark.skipif(not HUMANEVAL.is_file(), reason="HumanEval+ data not beside the repo")
def test_code_prompts_cycled_when_due_are_the_listed_ones():
    plan = build_plan(CodeProfile(output_len=32), BuildContext(400, 1, 8, 8))
    assert (
        plan.workload.prompts_digest
        == "sha256:2628ce137127eca7bd26169bbba1ada822a826fec3be32587818bb41c708ad42"
    )
    assert plan.workload.output_lens_digest == (
        "sha256:9396b5d68f5804f0fd5a8396571526e1241469f89a7cf249481d14b42a17641a"
    )
    assert plan.workload.file_digest == sha256_file(HUMANEVAL)
    rows = [json.loads(x)["prompt"] for x in gzip.decompress(HUMANEVAL.read_bytes()).splitlines()]
    order = np.random.default_rng(1).permutation(len(rows))
    _same_as_listed(plan, [rows[order[i % len(rows)]] for i in range(400)])


# A user's file: blank lines, "\r\n", an escaped U+2028 inside a string, a raw one between two objects
# (str.splitlines ends a line there, as reading the whole text always did), no final newline.
JSONL = (
    '{"prompt": "hello", "output_len": 3}\n\n{"prompt": "bye \\u00e9 \\u2028 x"}\r\n'
    '{"prompt": "a\\nb", "output_len": 7}\n'
)
ODD = '{"prompt": "x"}\u2028{"prompt": "yz"}\r{"prompt": "w"}\n  \n{"prompt": "v"}'


@pytest.mark.parametrize(
    ("text", "count", "listed", "digest", "out_digest"),
    [
        (
            JSONL, 7, ["hello", "bye é \u2028 x", "a\nb"] * 2 + ["hello"],
            "sha256:2e351342cc27d41d45111f5abcf452d47bbcfc4dac15a87f95cb5e5f266b2bfb",
            "sha256:76535bd9f6636a4d09d4e5bb9124468b32a005a6e7910b104cfd5e198023b798",
        ),
        (
            ODD, 5, ["x", "yz", "w", "v", "x"],
            "sha256:d03a554e744aa02a97f134de66ca4dc6aa357023cf9851391d10d8727d82c01f",
            "sha256:37b3d1f6149db6c060e74f65b06dccd9548f5a72e4466f9ebad52fb0f9a2a6d8",
        ),
    ],
    ids=["jsonl", "line-separators"],
)  # fmt: skip
def test_jsonl_prompts_read_when_due_are_the_listed_ones(tmp_path, text, count, listed, digest, out_digest):
    path = tmp_path / "w.jsonl"
    path.write_bytes(text.encode())
    plan = build_plan(JsonlProfile(path=str(path)), BuildContext(count, 0, 8, 9))
    assert plan.workload.prompts_digest == digest and plan.workload.output_lens_digest == out_digest
    assert plan.workload.file_digest == sha256_bytes(text.encode())
    assert (
        list(plan.prompts) == listed and plan.prompts[-1] == listed[-1] and plan.prompts[1:3] == listed[1:3]
    )
    assert list(pickle.loads(pickle.dumps(plan.prompts))) == listed  # a worker is sent the rows, not the path
    # the gzipped file: the same prompts
    gz = tmp_path / "w.jsonl.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    zipped = build_plan(JsonlProfile(path=str(gz)), BuildContext(count, 0, 8, 9))
    assert zipped.workload.prompts_digest == digest and zipped.workload.file_digest == sha256_file(gz)
    assert list(zipped.prompts) == listed


def test_a_jsonl_file_is_read_once(tmp_path):
    path = tmp_path / "w.jsonl"
    path.write_text('{"prompt": "one"}\n{"prompt": "two \\ud800"}\n')  # a lone surrogate, as JSON allows
    prompts = build_plan(JsonlProfile(path=str(path)), BuildContext(4, 0, 8, 9)).prompts
    path.write_text('{"prompt": "changed"}\n')  # what was read is what is sent, whatever happens to the file
    assert list(prompts) == ["one", "two \ud800", "one", "two \ud800"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # a bad row before a line not UTF-8: the whole text's decoding was checked first, and still is
        (b'not json\n{"prompt": "x"}\n{"prompt": "\xff"}\n', "line 3: not UTF-8 text"),
        ('{"prompt": "x"}\u2028not json\n'.encode(), "line 2: not JSON"),  # lines as splitlines counts them
        (b'{"prompt": "x"}\n\n{"prompt": "y", "output_len": 0}\n', "w.jsonl line 3: output_len must be"),
        (b"\n \n", "holds no prompts"),
    ],
)
def test_a_bad_jsonl_line_is_named_as_before(tmp_path, text, needle):
    path = tmp_path / "w.jsonl"
    path.write_bytes(text)
    with pytest.raises(WorkloadError) as err:
        build_workload(WorkloadConfig(source="jsonl", path=str(path)), 3)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_an_output_len_the_run_does_not_send_is_not_checked(tmp_path):
    path = tmp_path / "w.jsonl"
    path.write_text('{"prompt": "x"}\n{"prompt": "y", "output_len": "many"}\n')
    assert build_workload(WorkloadConfig(source="jsonl", path=str(path), output_len=5), 1).output_lens == [5]


def test_a_truncated_gzip_prompt_file_is_one_line(tmp_path):
    path = tmp_path / "w.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"prompt": "x"}\n' * 1000)[:-40])
    with pytest.raises(WorkloadError, match="w.jsonl.gz: cannot read \\(a truncated gzip stream\\)"):
        build_workload(WorkloadConfig(source="jsonl", path=str(path)), 2)


N, INPUT_LEN = 200_000, 64
# bytes, 1/11 of the list's peak. Measured for this plan (tracemalloc peak, 2-core host): 180.2 MiB
# built as a list (main at 0c879a4), 0.4 MiB drawn when due (the stream's checkpoints); the resident set
# of a process of its own grew 0.5 MiB while planning, 69 MiB with the prompts then held in a list
BOUND = 16 * 2**20
# what any plan loads once (lazy imports, the vocabulary) is loaded before the measure by a plan of two
_SETUP = (
    "from probes.load.workloads.context import BuildContext\n"
    "from probes.load.workloads.drawn import CHECKPOINT\n"
    "from probes.load.workloads.profiles import SyntheticProfile\n"
    "from probes.load.workloads.registry import build_plan\n"
    f"build_plan(SyntheticProfile(), BuildContext(2, 0, {INPUT_LEN}, 8))\n"
)
_PLAN = f"plan = build_plan(SyntheticProfile(), BuildContext({N}, 0, {INPUT_LEN}, 8))\n"


@pytest.mark.system  # ~5 s: 200,000 prompts' digest, in a process of its own
def test_a_synthetic_plan_of_200000_prompts_holds_no_list_of_them():
    grew, result = growth(
        setup=_SETUP,
        work=_PLAN,
        after=f"""
            result = {{
                "n": len(plan.prompts), "states": len(plan.prompts.states), "per_state": CHECKPOINT,
                "sampled_chars": sum(len(plan.prompts[i]) for i in range(0, {N}, 1000)),
            }}
            """,
    )  # fmt: skip
    assert result["n"] == N and result["states"] == -(-N // result["per_state"])
    # known truth: the text the plan stands for (~50 MiB, estimated from every 1,000th prompt)
    assert result["sampled_chars"] * 1000 > 2 * BOUND
    assert grew < BOUND, f"grew {grew / 2**20:.1f} MiB for {N:,} prompts of {INPUT_LEN} tokens"


@pytest.mark.system
def test_the_measure_sees_the_prompts_held_as_a_list():
    """Known truth for the bound above: the same plan's prompts held in a list grow the resident set past it."""
    grew, _ = growth(setup=_SETUP, work=_PLAN + "held = list(plan.prompts)\n")
    assert grew > 2 * BOUND, f"grew {grew / 2**20:.1f} MiB"
