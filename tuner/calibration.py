"""Fit the simulator's step-time model to a few live measurements of the target.

Closed-loop runs at concurrency c (≤ max_num_seqs, speculation off) decode in batches of c. With fixed
output lengths and a common start the c clients stay in step: they are admitted together, so one
step prefills c prompts and the next L − 1 steps only decode. So, per point,
    median TPOT ≈ a + s·c
    median TTFT ≈ a + s·c + p·c·input_len
which is linear in (a, s, p) ≥ 0: solved by non-negative least squares (scipy.optimize.nnls) on
relative residuals, so each equation counts alike whatever its scale.
"""

from __future__ import annotations

import numpy as np

from probes.core.errors import InputError
from probes.core.measurement import MS_PER_S
from tuner.evaluation import RunSample
from tuner.knobs import OperatingPoint
from tuner.simulator import SimParams, StepTimeModel
from tuner.spec import TuningLoad


class CalibrationError(InputError):
    """Measurements that cannot determine the simulator's parameters."""


def fit_step_model(
    runs: list[tuple[OperatingPoint, RunSample]],
    workload: TuningLoad,
    *,
    restart_s: float,
    jitter: bool = True,
) -> SimParams:
    """Simulator parameters from closed-loop runs at ≥ 2 concurrencies (speculation off)."""
    # deferred: importing scipy costs every command ~0.7 s of CPU at its start (tuner.result needs this module)
    from scipy.optimize import nnls

    usable = [(p, r) for p, r in runs if p.spec_k == 0 and p.concurrency <= p.max_num_seqs and len(r.e2el_ms)]
    if len({p.concurrency for p, _ in usable}) < 2:
        raise CalibrationError("calibration needs runs at ≥ 2 concurrencies with speculation off")
    if workload.output_len < 2:
        raise CalibrationError("calibration needs output_len ≥ 2 to observe decode steps")
    rows, targets, cvs = [], [], []
    L, n_in = workload.output_len, workload.input_len
    for point, run in usable:
        c = point.concurrency
        tpot = _tpot(run)
        rows.append([1.0, c, 0.0])
        targets.append(float(np.median(tpot)))
        rows.append([1.0, c, c * n_in])
        targets.append(float(np.median(run.ttft_ms)) / MS_PER_S)
        cvs.append(float(np.std(tpot) / np.mean(tpot)) if np.mean(tpot) > 0 else 0.0)
    # Relative residuals: TTFTs (seconds) would otherwise outweigh TPOTs (tens of ms) and let the TTFT
    # rows, which also carry scheduling waits the model lacks, decide the decode costs (seen live).
    A, y = np.array(rows), np.array(targets)
    w = 1.0 / np.maximum(y, 1e-6)
    (a, s, p), _ = nnls(A * w[:, None], y * w)
    points = ", ".join(sorted({str(pt.concurrency) for pt, _ in usable}))
    return SimParams(
        step=StepTimeModel(base_s=float(a), per_seq_s=float(s), per_prefill_token_s=float(p)),
        restart_s=restart_s,
        step_jitter_cv=float(np.median(cvs)) if jitter else 0.0,
        provenance=f"NNLS fit of median TPOT and TTFT at concurrency {points} "
        f"(input {n_in}, output {L} tokens); step jitter = median per-request TPOT CV",
    )


def _tpot(run: RunSample) -> np.ndarray:
    """Per-request TPOT in seconds (the step model's unit), single-token replies left out."""
    tpot = run.values("tpot_ms")
    return tpot[~np.isnan(tpot)] / MS_PER_S


def acceptance_rate(num_drafts: float, num_draft_tokens: float, num_accepted_tokens: float) -> float:
    """Per-position conditional acceptance α from vLLM's spec-decode counters.

    With width k = draft tokens / drafts and a constant α, the expected accepted tokens per draft is
    α + α² + … + α^k; solve that for α.
    """
    # deferred: importing scipy costs every command ~0.7 s of CPU at its start (tuner.result needs this module)
    from scipy.optimize import brentq

    if num_drafts <= 0 or num_draft_tokens <= 0:
        raise CalibrationError("speculation counters show no drafts: acceptance cannot be computed")
    k = num_draft_tokens / num_drafts
    mean_accepted = num_accepted_tokens / num_drafts
    if mean_accepted <= 0:
        return 0.0
    if mean_accepted >= k:
        return 1.0
    return float(brentq(lambda a: sum(a**j for j in range(1, round(k) + 1)) - mean_accepted, 0.0, 1.0))


def fit_speculation(params: SimParams, point: OperatingPoint, run: RunSample, alpha: float) -> SimParams:
    """Add the verification cost per draft token from one closed-loop run with speculation on.

    Median TPOT ≈ step(c, k) / E[tokens per step], with E = Σ_{j=0..k} α^j; the per-step overhead of
    speculation is folded into the per-draft-token cost (one equation, one unknown).
    """
    if point.spec_k <= 0:
        raise CalibrationError("fit_speculation needs a run with speculation on (spec_k > 0)")
    c, k = point.concurrency, point.spec_k
    per_step = float(np.median(_tpot(run))) * sum(alpha**j for j in range(k + 1))
    base = params.step.base_s + params.step.per_seq_s * c
    d = max(0.0, (per_step - base) / (c * k))
    step = params.step.model_copy(update={"per_draft_token_s": d, "spec_base_s": 0.0})
    return params.model_copy(
        update={
            "step": step,
            "acceptance_rate": alpha,
            "provenance": params.provenance + f"; speculation: α = {alpha:.3f} from vLLM counters, "
            f"draft-token cost from median TPOT at concurrency {c}, k = {k}",
        }
    )
