"""One constructor for a load point: the mode follows from what is given, and exactly one is given."""

import pytest

from probes.core.errors import InputError
from probes.load.point import LoadPoint


def test_mode_follows_from_concurrency_or_rate():
    closed = LoadPoint.at(concurrency=4, num_requests=8)
    assert (closed.mode, closed.concurrency, closed.rate) == ("closed", 4, None)
    open_ = LoadPoint.at(rate=2.5, max_concurrency=3, num_requests=8)
    assert (open_.mode, open_.rate, open_.max_concurrency) == ("open", 2.5, 3)


@pytest.mark.parametrize("load", [{}, {"concurrency": 2, "rate": 1.0}])
def test_exactly_one_of_concurrency_and_rate(load):
    with pytest.raises(InputError, match="exactly one of concurrency"):
        LoadPoint.at(**load)
