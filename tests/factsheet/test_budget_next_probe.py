"""The budget's allowance for a search's next probe (factsheet/builder/budget.py next_probe_s), against a server
whose probe times are known.

Known truth: 8 slots, each request 170 ms. A closed-loop probe at c users sends n = 2c requests (at least 4):
⌈n / c⌉ rounds of users, each round ⌈c / 8⌉ services long. At 8 users a probe takes 2 × 170 ms; at 16, 4 × 170 ms:
the doubling past capacity doubles the probe, which 1.5 × the longest so far does not cover."""

from __future__ import annotations

import math

import pytest

from factsheet.builder.budget import ProbeTime, next_probe_s

pytestmark = pytest.mark.unit

SLOTS, SERVICE_S = 8, 0.170


def _requests(users: float) -> int:
    return max(4, 2 * int(users))


def _closed_s(users: float) -> float:
    return math.ceil(_requests(users) / users) * math.ceil(users / SLOTS) * SERVICE_S


def _made(*values: float) -> list[ProbeTime]:
    return [ProbeTime(v, _requests(v), _closed_s(v)) for v in values]


@pytest.mark.parametrize(
    ("made", "value"),
    [
        ((2, 4, 8), 16),  # the doubling's first fail: twice the longest so far
        ((2, 4, 8, 16), 32),
        ((2, 4, 8, 16), 12),  # bisection inside the bracket
        ((8, 16), 4),  # halving down: the same rounds, no more users
        ((1,), 2),
    ],
)
def test_the_allowance_covers_the_next_probe(made, value):
    allowed = next_probe_s(_made(*made), value, "concurrency", _requests(value))
    assert allowed >= _closed_s(value)


def test_the_allowance_is_needed_past_capacity():
    made = _made(2, 4, 8)
    longest = max(p.seconds for p in made)
    assert 1.5 * longest < _closed_s(16) <= next_probe_s(made, 16, "concurrency", _requests(16))


def test_an_open_loop_at_a_lower_rate_takes_its_longer_send():
    # 20 requests at r req/s below the server's 47 req/s: sent over 20 / r s, the last one 170 ms after
    def open_s(rate: float) -> float:
        return 20 / rate + SERVICE_S

    made = [ProbeTime(r, 20, open_s(r)) for r in (10.0, 20.0)]
    assert next_probe_s(made, 5.0, "rate", 20) >= open_s(5.0)
    assert next_probe_s(made, 15.0, "rate", 20) >= open_s(15.0)
