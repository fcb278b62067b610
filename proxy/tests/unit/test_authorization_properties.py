"""Authorization of every operation, as a property: in-process, hypothesis-generated.

For random tokens and random requests (every operation, both surfaces, fork
sources spelled every way, percent-escapes), the store never touches a
stream or bucket the token does not grant: the spy records what the server
made the store look at, and the model (``authorization_model``) judges it
without ``ds_server.auth``. A sample runs through the real Envoy in
``integration/test_gateway_authorization_properties.py``.

Here, not beside ds_server.auth's other tests in server/tests: the spy
subclasses ``Store``, which the compiled build (``make unit-compiled`` runs
server/tests against it) does not allow.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING

import pytest
from authorization_model import (
    WORLD,
    Call,
    SpyStore,
    Token,
    Touch,
    calls,
    scenarios,
    world_requests,
)
from ds_server import create_app
from ds_server.live import LiveNotifier
from ds_server.settings import AuthSection, Settings, StorageSection
from ds_server.stores.registry import open_store
from hypothesis import assume, given, settings
from litestar.testing import TestClient

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx

EVERYTHING = Token(read=frozenset({"*"}), write=frozenset({"*"}))


class Service:
    """One in-process server in gateway mode over a spied memory store."""

    def __init__(self, client: TestClient[object]) -> None:
        self.client = client
        self.touches: list[Touch] = []

    def send(self, token: Token, call: Call) -> httpx.Response:
        headers = [("X-JWT-Payload", _payload(token)), *call.headers]
        return self.client.request(
            call.method, call.target, headers=headers, content=call.body or None
        )

    def build_world(self) -> None:
        """Buckets and streams as the model describes them, each holding its own name.

        Requests change the world as they go (appends, deletes, forks,
        snapshots); the property holds whatever state it is in.
        """
        admin = {"X-JWT-Payload": _payload(EVERYTHING)}
        for method, path, extra in world_requests():
            headers = {**extra.get("headers", {}), **admin}
            response = self.client.request(
                method, path, headers=headers, content=extra.get("content")
            )
            assert response.status_code == 201, response.text
        for name in WORLD:
            read = self.send(EVERYTHING, Call("GET", f"/v1/stream/{name}?offset=-1"))
            assert read.text == name


def _payload(token: Token) -> str:
    claims = {"sub": "admin", "ds": token.claim()}
    return base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    settings_ = Settings(storage=StorageSection(mode="memory"), auth=AuthSection(mode="gateway"))
    touches: list[Touch] = []
    store = SpyStore(open_store(settings_, LiveNotifier()), touches.append)
    with TestClient(app=create_app(settings_, store=store)) as client:
        spied = Service(client)
        spied.build_world()
        spied.touches = touches
        touches.clear()
        yield spied


@settings(max_examples=400)
@given(scenario=scenarios())
def test_no_request_touches_what_its_token_does_not_grant(
    service: Service, scenario: tuple[Token, Call]
) -> None:
    token, call = scenario
    service.touches.clear()
    response = service.send(token, call)
    refused = [touch for touch in service.touches if not token.grants(touch)]
    assert not refused, f"{call.describe()} -> {response.status_code}: touched {refused}"


@settings(max_examples=150)
@given(drawn=calls())
def test_a_token_granting_everything_is_never_refused(
    service: Service, drawn: tuple[Call, str, str | None]
) -> None:
    call, _, _ = drawn
    response = service.send(EVERYTHING, call)
    assert response.status_code not in (401, 403), f"{call.describe()}: {response.text}"


@settings(max_examples=150)
@given(drawn=calls())
def test_a_token_granting_one_stream_is_never_refused_that_stream(
    service: Service, drawn: tuple[Call, str, str | None]
) -> None:
    call, _, stream = drawn
    assume(stream is not None and not stream.startswith("__"))
    assume(not any(name == "Stream-Forked-From" for name, _ in call.headers))
    assert stream is not None
    token = Token(read=frozenset({stream}), write=frozenset({stream}))
    response = service.send(token, call)
    assert response.status_code not in (401, 403), f"{call.describe()}: {response.text}"
