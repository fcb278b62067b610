"""ds_server.auth.gateway: the edge's guard, and its wiring by DS_AUTH__MODE."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from ds_server.app import asgi_app, create_app
from ds_server.auth import GatewayGuard
from ds_server.edge.cors import Cors
from ds_server.edge.layer import Edge
from ds_server.settings import AuthSection, Settings, StorageSection

if TYPE_CHECKING:
    from litestar.types import ASGIApp, Receive, Scope, Send


class _NoStreams:
    """A handler that serves nothing itself: every request reaches the app."""

    def route(self, scope: Any) -> None:
        return None

    async def serve(self, route: object, request: Any) -> Any:
        raise AssertionError("never routed")


def gateway_auth(app: Any) -> ASGIApp:
    """``app`` behind the edge with the gateway guard, as the server runs it."""
    return Edge(app, _NoStreams(), Cors([]), guard=GatewayGuard())


async def ok_app(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"passed", "more_body": False})


def identity(sub: str = "alice", **scopes: list[str]) -> dict[str, str]:
    claims: dict[str, Any] = {"sub": sub, "ds": scopes}
    encoded = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return {"X-JWT-Payload": encoded}


@pytest.fixture
async def client() -> Any:
    app = gateway_auth(ok_app)
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as http:
        yield http


async def test_granted_request_passes(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/stream/chat/x", headers=identity(read=["chat"]))
    assert response.status_code == 200
    assert response.text == "passed"


async def test_missing_identity_is_401_with_a_challenge(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/stream/chat/x")
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.headers["cache-control"] == "no-store"
    # Sent straight to ds-server, past the gateway: the answer says where to go.
    assert response.text.startswith("no verified token; send requests through the gateway")
    assert "8080" in response.text


async def test_an_ambiguous_identity_is_401_without_the_gateway_hint(
    client: httpx.AsyncClient,
) -> None:
    headers = [("X-JWT-Payload", identity()["X-JWT-Payload"])] * 2
    response = await client.get("/v1/stream/chat/x", headers=headers)
    assert response.status_code == 401
    assert response.text == "ambiguous token payload\n"


async def test_ungranted_bucket_is_403(client: httpx.AsyncClient) -> None:
    response = await client.post("/ds/chat/x", headers=identity(read=["chat"]))
    assert response.status_code == 403
    assert response.text == "the token does not grant write access to bucket 'chat'\n"


async def test_malformed_scopes_are_403(client: httpx.AsyncClient) -> None:
    headers = identity()
    headers["X-JWT-Payload"] = base64.urlsafe_b64encode(b'{"sub":"alice","ds":7}').decode()
    response = await client.get("/ds/chat/x", headers=headers)
    assert response.status_code == 403


async def test_fork_source_is_checked(client: httpx.AsyncClient) -> None:
    headers = {**identity(read=["chat"], write=["chat"]), "Stream-Forked-From": "secret/s"}
    response = await client.put("/v1/stream/chat/f", headers=headers)
    assert response.status_code == 403
    assert "'secret'" in response.text


@pytest.mark.parametrize(("method", "path"), [("GET", "/healthz"), ("OPTIONS", "/v1/stream/x")])
async def test_public_requests_need_no_identity(
    method: str, path: str, client: httpx.AsyncClient
) -> None:
    assert (await client.request(method, path)).status_code == 200


async def test_websockets_are_refused() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "websocket.connect"}

    app = gateway_auth(ok_app)
    await app({"type": "websocket", "path": "/v1/stream/x", "headers": []}, receive, send)  # type: ignore[arg-type, typeddict-item]
    assert sent == [{"type": "websocket.close", "code": 1008, "reason": ""}]


async def test_lifespan_passes_through() -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    await gateway_auth(app)({"type": "lifespan"}, None, None)  # type: ignore[arg-type]
    assert seen == ["lifespan"]


# The stream routes' inferred path parameters warn on current Litestar; that is
# the routes' business, not this wiring's.
@pytest.mark.filterwarnings("ignore::litestar.exceptions.LitestarDeprecationWarning")
@pytest.mark.parametrize(("mode", "status"), [("gateway", 401), ("off", 404)])
async def test_server_wiring_follows_the_setting(mode: str, status: int) -> None:
    settings = Settings(
        auth=AuthSection(mode=mode),  # type: ignore[arg-type]
        storage=StorageSection(mode="memory"),
    )
    app = asgi_app(create_app(settings))
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://ds") as http:
        response = await http.get("/v1/stream/chat/missing", params={"offset": "-1"})
        health = await http.get("/healthz")
    assert response.status_code == status
    # Security headers wrap the authorization answers too.
    assert response.headers["x-content-type-options"] == "nosniff"
    assert health.status_code == 200


def test_auth_is_off_by_default() -> None:
    assert Settings().auth.mode == "off"


async def test_the_writer_identity_is_the_verified_sub() -> None:
    seen: list[list[bytes]] = []

    async def recording_app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append([value for name, value in scope["headers"] if name == b"x-jwt-sub"])
        await ok_app(scope, receive, send)

    transport = httpx.ASGITransport(app=gateway_auth(recording_app))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as http:
        headers = {**identity("josé", write=["chat"]), "X-JWT-Sub": "mallory"}
        response = await http.post("/v1/stream/chat/x", headers=headers)
    assert response.status_code == 200
    assert seen == [["josé".encode()]]


# The guard remembers decoded payloads and a path's accesses (auth/recent.py):
# what it remembers must never change a decision.


async def test_each_token_is_judged_by_its_own_scopes_on_a_remembered_path(
    client: httpx.AsyncClient,
) -> None:
    granted, other = identity("alice", write=["chat"]), identity("bob", write=["notes"])
    for _ in range(2):
        assert (await client.post("/v1/stream/chat/x", headers=granted)).status_code == 200
        assert (await client.post("/v1/stream/chat/x", headers=other)).status_code == 403


async def test_a_remembered_path_still_checks_a_fork_source(client: httpx.AsyncClient) -> None:
    headers = identity(read=["chat"], write=["chat"])
    assert (await client.put("/v1/stream/chat/f", headers=headers)).status_code == 200
    forked = {**headers, "Stream-Forked-From": "secret/s"}
    assert (await client.put("/v1/stream/chat/f", headers=forked)).status_code == 403


async def test_a_refused_payload_is_refused_every_time(client: httpx.AsyncClient) -> None:
    malformed = {"X-JWT-Payload": base64.urlsafe_b64encode(b'{"sub":"alice","ds":7}').decode()}
    for _ in range(3):
        assert (await client.get("/ds/chat/x", headers=malformed)).status_code == 403


async def test_decisions_hold_past_what_the_guard_remembers() -> None:
    app = Edge(ok_app, _NoStreams(), Cors([]), guard=GatewayGuard(remembered=2))
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    tokens = [(identity(f"user-{n}", write=[f"b{n}"]), f"/v1/stream/b{n}/s") for n in range(5)]
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as http:
        for _ in range(2):
            for n, (headers, path) in enumerate(tokens):
                assert (await http.post(path, headers=headers)).status_code == 200
                elsewhere = tokens[(n + 1) % len(tokens)][1]
                assert (await http.post(elsewhere, headers=headers)).status_code == 403
