"""A build spec is held to the load probe's limits (issue 30): a size or time no run can honour is one line
naming the spec field and its maximum, exit 2, before anything runs (it was exit 3 inside the build)."""

import pytest

from factsheet.spec.build import load_spec
from probes.core.errors import InputError
from tests.support import mock_spec


@pytest.mark.parametrize(
    ("extra", "points", "needle"),
    [
        ("", ((1, 10**12),), "load.points.0.num_requests: Input should be less than or equal to 1000000"),
        ("  input_len: 1000000000000\n", ((1, 4),), "load.input_len: Input should be less than or equal to 1048576"),
        ("  request_timeout_s: .inf\n", ((1, 4),), "load.request_timeout_s: Input should be less than or equal to 3600"),
    ],
)  # fmt: skip
def test_a_spec_size_over_its_maximum_is_one_line(tmp_path, extra, points, needle):
    spec = mock_spec.endpoint_spec(tmp_path, "http://127.0.0.1:9", extra, points)
    with pytest.raises(InputError) as err:
        load_spec(spec)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_a_spec_duration_of_ages_is_refused(tmp_path):
    point = {"concurrency": 1, "num_requests": 4, "duration_s": 1e30}
    spec = mock_spec.endpoint_spec(tmp_path, "http://127.0.0.1:9", overrides={"load": {"points": [point]}})
    with pytest.raises(InputError, match=r"duration_s: Input should be less than or equal to 86400"):
        load_spec(spec)
