"""A factsheet built from real load runs against the mock server (known TTFT and ITL) and
hand-made energy, accuracy and tuning results, for the rendering tests."""

from __future__ import annotations

import asyncio

from factsheet.document.rules import rule_set
from factsheet.document.schema import (
    SCHEMA_VERSION,
    AccuracySection,
    EnergySection,
    Factsheet,
    Host,
    Identity,
    LoadPointEntry,
    LoadSection,
    Provenance,
    RecordsFile,
    SystemSection,
)
from probes.accuracy import AccuracyResult, DatasetInfo, PassRates, SampleRecord, TestVerdict
from probes.accuracy.result import Timings
from probes.core.digests import sha256_bytes
from probes.core.measurement import NotMeasured
from probes.energy import (
    CarbonSpec,
    Component,
    ComponentWindow,
    EnergySpec,
    IdlePower,
    WindowEnergy,
    carbon_figures,
    energy_figures,
)
from probes.energy.monitor import ComponentIdle
from probes.load.point import SLO, LoadPoint
from probes.load.records import records_jsonl
from probes.load.runner import PointResult, run_point
from probes.targets import EngineInfo, PreparedModel
from probes.targets.mock_server import MockServerConfig, running
from tuner import (
    KnobSpace,
    OperatingPoint,
    SimParams,
    SimulatorEvaluator,
    StepTimeModel,
    TunerSpec,
    TuningLoad,
    tune,
)

NAME = "Mock-7B on the test bench"
SLO_SPEC = SLO(ttft_ms=60.0, e2el_ms=120.0, p99_metric="e2el_ms")
CARBON_REASON = "no grid carbon intensity: the spec gives none (test)"
PREDICTOR_REASON = "feature-model predictor not yet implemented in this tool version"
MOCK = MockServerConfig(ttft_ms=40.0, itl_ms=4.0)
FAILING = MockServerConfig(fail_every=1)
OUTPUT_LEN = 8
CPU_MODEL = "AMD EPYC 7763 64-Core Processor"  # in CodeCarbon's TDP table: the estimate has a figure
SERVED = PreparedModel(
    source="hf:test/Mock-7B", served_path="/models/mock-7b", digests={"model.safetensors": "sha256:" + "12" * 32},
    conversion={"tool": "gguf-convert", "from": "mock-7b.Q8_0.gguf"}, tokenizer_path="/models/mock-7b/tokenizer.json",
)  # fmt: skip


def load_points() -> list[PointResult]:
    """Two closed-loop points (every request takes ≈ 40 + 7 × 4 = 68 ms), then an open-loop point
    against a server that fails every request: nothing completes there."""
    points = [
        LoadPoint(concurrency=1, num_requests=12, input_len=16, output_len=OUTPUT_LEN),
        LoadPoint(concurrency=4, num_requests=32, warmup_requests=4, input_len=16, output_len=OUTPUT_LEN),
    ]
    with running(MOCK) as url:
        results = [asyncio.run(run_point(url, MOCK.model, p, SLO_SPEC)) for p in points]
    failing = LoadPoint(mode="open", rate=200.0, num_requests=8, input_len=16, output_len=OUTPUT_LEN)
    with running(FAILING) as url:
        results.append(asyncio.run(run_point(url, FAILING.model, failing, SLO_SPEC)))
    return results


def _entry(i: int, result: PointResult) -> LoadPointEntry:
    data = records_jsonl(result.records)
    rf = RecordsFile(
        path=f"records/load-{i:02d}.jsonl", sha256=sha256_bytes(data), records=len(result.records)
    )
    return LoadPointEntry(result=result, records=rf)


def _energy(result: PointResult) -> EnergySection:
    gpu = Component(kind="gpu", index=0, label="GPU 0", source="NVML device 0", boundary="the GPU board",
                    method="NVML total energy counter")  # fmt: skip
    cpu = Component(kind="cpu_package", index=None, label="CPU package", source="/sys/class/powercap",
                    boundary="CPU package", method="RAPL energy counter")  # fmt: skip
    t0, t1 = result.window_epoch
    window = WindowEnergy(
        t_start=t0, t_end=t1, duration_s=t1 - t0, sample_interval_s=0.1,
        components=[
            ComponentWindow(component=gpu, energy_j=150.0 * (t1 - t0), samples_in_window=7, counter_resets=0,
                            read_errors=0),
            ComponentWindow(component=cpu, energy_j=NotMeasured(reason="RAPL not readable: permission denied"),
                            samples_in_window=0, counter_resets=0, read_errors=0),
        ],
    )  # fmt: skip
    idle = IdlePower(t_start=t0 - 12, t_end=t0 - 2, duration_s=10.0,
                     components=[ComponentIdle(component=gpu, power_w=60.0, samples=100)])  # fmt: skip
    m = result.metrics
    figures = energy_figures(window, idle, requests=m.completed, output_tokens=m.total_output_tokens,
                             config=EnergySpec(estimate=True), cpu_model=CPU_MODEL)  # fmt: skip
    return EnergySection(energy=figures, carbon=carbon_figures(figures.energy_kwh(), CarbonSpec()))


def _accuracy() -> AccuracySection:
    def sample(task: str, plus: str) -> SampleRecord:
        cause = None if plus == "pass" else "plus input #3: expected 6, got 5"
        return SampleRecord(task_id=task, sample=0, base=TestVerdict(status="pass", n_inputs=9),
                            plus=TestVerdict(status=plus, cause=cause, n_inputs=80), seconds=0.2,
                            reply="def f(): ...", program="def f(): ...")  # fmt: skip

    per_task = [sample("HumanEval/0", "pass"), sample("HumanEval/1", "fail")]
    result = AccuracyResult(
        benchmark="HumanEval+",
        dataset=DatasetInfo(name="HumanEval+", version="v0.1.10", sha256="sha256:" + "ab" * 32,
                            source="test fixture", tests="base+plus", license="MIT"),
        tests_run=["base", "plus"], mode="chat", prompting="instruction prompt, first code block",
        subset="first 2 tasks in dataset order", temperature=0.0, max_tokens=256,
        pass_rates=PassRates(base={"pass@1": 1.0}, plus={"pass@1": 0.5}, n_tasks=2, n_samples_per_task=1),
        generation_failures=0, isolation=["network namespace", "rlimits"],
        timings=Timings(generation_s=1.0, expected_outputs_s=0.5, evaluation_s=0.7), per_task=per_task,
    )  # fmt: skip
    lines = b"".join(t.model_dump_json().encode() + b"\n" for t in per_task)
    rf = RecordsFile(path="records/humaneval.jsonl", sha256=sha256_bytes(lines), records=len(per_task))
    return AccuracySection(result=result, records=rf)


def tuning_result():
    params = SimParams(
        step=StepTimeModel(base_s=0.005, per_seq_s=0.001, per_prefill_token_s=1e-5, per_draft_token_s=3e-4),
        acceptance_rate=0.6, restart_s=20.0, provenance="synthetic test parameters",
    )  # fmt: skip
    cfg = TunerSpec(
        slo_p99_ms=800.0, knobs=KnobSpace(concurrency=[1, 2, 4, 8], max_num_seqs=[2, 4, 8], spec_k=[0, 2]),
        start=OperatingPoint(concurrency=2, max_num_seqs=4, spec_k=0),
        workload=TuningLoad(num_requests=48, output_len=16, input_len=32),
        max_evaluations=6, bootstrap_resamples=50,
    )  # fmt: skip
    return tune(SimulatorEvaluator(params), cfg)


def _system() -> SystemSection:
    host = Host(hostname_hash="sha256:" + "cd" * 32, os="Linux", kernel="6.1.0", cpu_model="Test CPU @ 2 GHz",
                cpu_count=2, cpu_affinity=2, memory_gib=7.6, gpus=[])  # fmt: skip
    engine = EngineInfo(name="vllm", version="0.9.2", command=["python", "-m", "vllm.entrypoints.openai.api_server",
                        "--max-num-seqs", "8"], env={"VLLM_CPU_KVCACHE_SPACE": "1"})  # fmt: skip
    return SystemSection(target_kind="vllm", engine=engine, host=host, python="3.11.9",
                      libraries={"numpy": "2.0.0", "weasyprint": "70.0"},
                      serving_libraries=NotMeasured(reason="serving environment not inspected (test)"))  # fmt: skip


def _provenance() -> Provenance:
    return Provenance(tool_version="0.1.0", git_commit="0" * 40, git_dirty=False, spec_file="model.yaml",
                      spec_sha256="sha256:" + "ef" * 32, command=["factsheet", "build", "model.yaml"],
                      started_at="2025-01-01T00:00:00+00:00", finished_at="2025-01-01T00:05:00+00:00",
                      wall_time_s=300.0)  # fmt: skip


def build_sheet(results: list[PointResult]) -> Factsheet:
    return Factsheet(
        rules=rule_set(SCHEMA_VERSION).ids,
        name=NAME,
        identity=Identity(
            name="Mock-7B", version="r1", owner="Test Lab", license="Apache-2.0", served_model=SERVED
        ),
        system=_system(),
        load=LoadSection(
            points=[_entry(i, r) for i, r in enumerate(results, 1)],
            capacity=NotMeasured(reason="not requested in the build spec"),
        ),
        accuracy=_accuracy(),
        energy=_energy(results[1]),
        tuning=tuning_result(),
        predictor=NotMeasured(reason=PREDICTOR_REASON),
        provenance=_provenance(),
    )


def empty_sheet() -> Factsheet:
    """Nothing measured: every section says why."""
    return Factsheet(
        rules=rule_set(SCHEMA_VERSION).ids,
        name="Nothing measured",
        identity=Identity(name="Mock-7B"),
        system=_system(),
        load=NotMeasured(reason="target did not answer (test)"),
        accuracy=NotMeasured(reason="not requested in the build spec"),
        energy=NotMeasured(reason="energy not requested (test)"),
        tuning=NotMeasured(reason="tuning not requested (test)"),
        predictor=NotMeasured(reason=PREDICTOR_REASON),
        provenance=_provenance(),
    )
