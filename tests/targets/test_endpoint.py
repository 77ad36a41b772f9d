"""An endpoint target read as a user's server answers: /v1/models as an object or a bare list, a base_url
ending in /v1 read without it (with a note), the model listing optional with `check_model: false`; every
other answer is one line naming the cause (exit 2), never a traceback."""

from __future__ import annotations

import httpx
import pytest

from probes.targets import EndpointTarget, TargetError, open_target
from probes.targets.mock_server import MockServerConfig, running


def test_bare_list_models_is_read():
    with running(MockServerConfig(models_listing="bare_list")) as url:
        with open_target(EndpointTarget(base_url=url, model="mock-model")) as live:
            assert live.server_listing["id"] == "mock-model"


def test_base_url_ending_in_v1_is_read_without_it():
    with running(MockServerConfig()) as url:
        with open_target(EndpointTarget(base_url=url + "/v1/", model="mock-model")) as live:
            assert live.base_url == url
            assert live.identity.notes == [
                f"target.base_url ends in /v1: read as {url} (the tool adds /v1/...)"
            ]


def test_unlisted_model_refused_with_the_way_forward():
    with running(MockServerConfig(engine="transformers-serve")) as url:
        with pytest.raises(TargetError, match="set target.check_model: false"):
            EndpointTarget(base_url=url, model="mock-model").check_reachable()
        target = EndpointTarget(base_url=url, model="mock-model", check_model=False)
        with open_target(target) as live:
            assert live.server_listing == {} and live.model == "mock-model"
            assert "does not list 'mock-model': sent as given (check_model false)" in live.identity.notes[0]


def test_404_names_the_root():
    with running(MockServerConfig()) as url:
        with pytest.raises(
            TargetError, match=r"answered HTTP 404 \(base_url is the server's root, without /v1\)"
        ):
            EndpointTarget(base_url=url + "/api", model="mock-model").check_reachable()


@pytest.mark.parametrize("body", ['"just a string"', '{"data": 3}', "{}"])
def test_other_shapes_are_one_line(body, monkeypatch):
    monkeypatch.setattr(httpx, "get", lambda *a, **k: httpx.Response(200, text=body))
    with pytest.raises(TargetError, match="answered neither a model list nor an object with 'data'"):
        EndpointTarget(base_url="http://127.0.0.1:9", model="m").check_reachable()


@pytest.mark.parametrize("status", [404, 500])
def test_a_listing_that_fails_is_a_note_with_check_model_false(status, monkeypatch):
    """transformers serve answers /v1/models with HTTP 500 where no hub cache exists."""
    monkeypatch.setattr(httpx, "get", lambda *a, **k: httpx.Response(status, text="boom"))
    target = EndpointTarget(base_url="http://127.0.0.1:9", model="m", check_model=False)
    assert target.read_listing() == (
        {},
        None,
        [f"/v1/models answered HTTP {status}: not read (check_model false)"],
    )
    with pytest.raises(TargetError, match=f"answered HTTP {status}"):
        EndpointTarget(base_url="http://127.0.0.1:9", model="m").check_reachable()
