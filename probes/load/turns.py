"""Figures of a chat-sessions point by turn index: turn k's requests carry k − 1 earlier exchanges, so
TTFT by turn shows what the prefix cache saves as the history grows (and the pooled figures hide)."""

from __future__ import annotations

from pydantic import Field

from probes.core.measurement import DEFAULT_PERCENTILES, Distribution, Model, shown, summarize
from probes.load.metrics import latency_samples
from probes.load.records import RequestRecord
from probes.load.stats import QuantileCI, quantile_ci


class TurnFigures(Model):
    """One turn index's requests in the point's steady window."""

    turn: int = Field(ge=1, description="turn index in its session, from 1")
    sent: int = Field(ge=0, description="requests of this turn index in the steady window")
    completed: int = Field(ge=0)
    ttft_ms: Distribution
    e2el_ms: Distribution
    ttft_ci: dict[str, QuantileCI] = Field(
        default_factory=dict, description="95 % order-statistic CIs of ttft p50 and p99 (keys 'p50', 'p99')"
    )
    prompt_tokens: Distribution = Field(description="the server's usage.prompt_tokens: the history's growth")


def turn_figures(
    records: list[RequestRecord], percentiles: tuple[float, ...] = DEFAULT_PERCENTILES
) -> list[TurnFigures] | None:
    """Per turn index (None when the records carry no turns: not a chat-sessions point)."""
    turns = sorted({r.turn for r in records if r.turn is not None})
    if not turns:
        return None
    out = []
    for k in turns:
        mine = [r for r in records if r.turn == k]
        samples = latency_samples(mine)
        ttft = samples["ttft_ms"]
        out.append(
            TurnFigures(
                turn=k,
                sent=len(mine),
                completed=sum(r.ok for r in mine),
                ttft_ms=summarize(ttft, unit="ms", definition=f"TTFT of turn {k}", percentiles=percentiles),
                e2el_ms=summarize(
                    samples["e2el_ms"], unit="ms", definition=f"E2EL of turn {k}", percentiles=percentiles
                ),
                ttft_ci={f"p{q:g}": quantile_ci(ttft, q) for q in (50.0, 99.0)} if ttft else {},
                prompt_tokens=summarize(
                    [r.prompt_tokens for r in mine if r.ok and r.prompt_tokens is not None],
                    unit="tokens",
                    definition=f"prompt tokens of turn {k} as the server counted them (usage.prompt_tokens)",
                    percentiles=percentiles,
                ),
            )
        )
    return out


def turn_summary(turns: list[TurnFigures] | None) -> list[str]:
    """One line a turn index for a console: TTFT p50/p99 (ms) with n, and the prompt it carried."""

    def ms(x: float | None) -> str:
        return shown(x, ".1f")

    return [
        f"turn {t.turn}: ttft p50 {ms(t.ttft_ms.p(50))} ms, p99 {ms(t.ttft_ms.p(99))} ms (n={t.ttft_ms.n}); "
        f"prompt {ms(t.prompt_tokens.mean)} tokens (mean)"
        for t in turns or []
    ]
