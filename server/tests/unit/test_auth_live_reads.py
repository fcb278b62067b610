"""ds_server.auth.live_reads and the guard's use of it: the cap per subject, the token's life."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from ds_server.auth import GatewayGuard
from ds_server.auth.live_reads import (
    TOKEN_EXPIRES_AT,
    LiveReadCounter,
    is_live_read,
    token_expires_at,
)
from ds_server.edge.cors import Cors
from ds_server.edge.layer import Edge

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from litestar.types import HTTPScope, Receive, Scope, Send


class _NoStreams:
    def route(self, scope: Any) -> None:
        return None

    async def serve(self, route: object, request: Any) -> Any:
        raise AssertionError("never routed")


def claims(sub: str = "alice", exp: float | None = None) -> dict[str, str]:
    payload: dict[str, Any] = {"sub": sub, "ds": {"read": ["*"], "write": ["*"]}}
    if exp is not None:
        payload["exp"] = exp
    encoded = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    return {"X-JWT-Payload": encoded}


@pytest.mark.parametrize(
    ("method", "path", "query", "live"),
    [
        ("GET", "/v1/stream/chat/x", b"offset=-1&live=sse", True),
        ("GET", "/v1/stream/chat/x", b"offset=-1&live=long-poll", True),
        ("GET", "/ds/chat/x", b"live=sse&offset=now", True),
        # Read as the route reads it: percent-encoded names and values count too.
        ("GET", "/v1/stream/chat/x", b"offset=-1&%6Cive=%73se", True),
        ("GET", "/v1/stream/chat/x", b"offset=-1", False),
        ("GET", "/v1/stream/chat/x", b"", False),
        # The route answers these 400: nothing to hold.
        ("GET", "/v1/stream/chat/x", b"live=sse", False),
        ("GET", "/v1/stream/chat/x", b"offset=-1&live=sse&live=sse", False),
        ("GET", "/v1/stream/chat/x", b"offset=-1&live=forever", False),
        # Not a stream read.
        ("HEAD", "/v1/stream/chat/x", b"offset=-1&live=sse", False),
        ("POST", "/v1/stream/chat/x", b"offset=-1&live=sse", False),
        ("GET", "/ds/chat/x/bootstrap", b"offset=-1&live=sse", False),
        ("GET", "/v1/stream/__ds/subscriptions/s", b"offset=-1&live=sse", False),
    ],
)
def test_which_requests_are_live_reads(method: str, path: str, query: bytes, live: bool) -> None:
    assert is_live_read(method, path, query) is live


def test_the_counter_caps_each_subject_on_its_own() -> None:
    counter = LiveReadCounter(2)
    scopes: list[Any] = [{} for _ in range(4)]
    assert counter.admit(scopes[0], "alice")
    assert counter.admit(scopes[1], "alice")
    assert not counter.admit(scopes[2], "alice")
    assert counter.admit(scopes[3], "bob")
    assert counter.open_reads("alice") == 2
    counter.release(scopes[0])
    counter.release(scopes[0])  # a second release of one request gives back nothing more
    counter.release(scopes[2])  # refused: held nothing
    assert counter.open_reads("alice") == 1
    assert counter.admit(scopes[2], "alice")
    for scope in scopes:
        counter.release(scope)
    assert counter.open_reads("alice") == counter.open_reads("bob") == 0


class _Held:
    """An app whose live reads stay open until ``release`` is set: the guard counts them."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.scopes: list[HTTPScope] = []
        self._arrived = asyncio.Condition()

    async def arrived(self, count: int) -> None:
        """Until ``count`` requests have reached the app."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: len(self.scopes) >= count)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scopes.append(scope)  # type: ignore[arg-type]
        async with self._arrived:
            self._arrived.notify_all()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        if b"live=" in scope["query_string"]:
            await self.release.wait()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


@pytest.fixture
async def held() -> AsyncIterator[tuple[_Held, httpx.AsyncClient]]:
    app = _Held()
    edge = Edge(app, _NoStreams(), Cors([]), guard=GatewayGuard(max_live_reads_per_sub=2))
    transport = httpx.ASGITransport(app=edge)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://gw") as http:
        yield app, http


SSE = "/v1/stream/chat/x?offset=-1&live=sse"


async def test_a_subject_past_its_cap_gets_429_until_a_read_ends(
    held: tuple[_Held, httpx.AsyncClient],
) -> None:
    app, http = held
    first = asyncio.ensure_future(http.get(SSE, headers=claims("alice")))
    second = asyncio.ensure_future(http.get(SSE, headers=claims("alice")))
    await app.arrived(2)
    refused = await http.get(SSE, headers=claims("alice"))
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "5"
    assert "too many live reads" in refused.text
    # Another subject, and alice's other requests, are untouched.
    catch_up = await http.get("/v1/stream/chat/x?offset=-1", headers=claims("alice"))
    assert catch_up.status_code == 200
    app.release.set()
    assert (await first).status_code == (await second).status_code == 200
    app.release.clear()
    again = asyncio.ensure_future(http.get(SSE, headers=claims("alice")))
    await app.arrived(4)
    app.release.set()
    assert (await again).status_code == 200


async def test_another_subject_is_not_counted_against_the_first(
    held: tuple[_Held, httpx.AsyncClient],
) -> None:
    app, http = held
    reads = [asyncio.ensure_future(http.get(SSE, headers=claims("alice"))) for _ in range(2)]
    await app.arrived(2)
    bob = asyncio.ensure_future(http.get(SSE, headers=claims("bob")))
    await app.arrived(3)
    app.release.set()
    assert [r.status_code for r in await asyncio.gather(*reads, bob)] == [200, 200, 200]


async def test_the_tokens_expiry_reaches_the_read(
    held: tuple[_Held, httpx.AsyncClient],
) -> None:
    app, http = held
    app.release.set()
    exp = time.time() + 60
    assert (await http.get(SSE, headers=claims(exp=exp))).status_code == 200
    assert token_expires_at(app.scopes[-1]) == exp
    assert app.scopes[-1][TOKEN_EXPIRES_AT] == exp  # type: ignore[typeddict-item]
    # Other requests don't need it.
    await http.get("/v1/stream/chat/x?offset=-1", headers=claims(exp=exp))
    assert token_expires_at(app.scopes[-1]) is None


async def test_a_live_read_with_an_expired_token_is_401(
    held: tuple[_Held, httpx.AsyncClient],
) -> None:
    """Envoy lets a token through up to its clock skew past exp; a live read would end at once."""
    app, http = held
    app.release.set()
    expired = claims(exp=time.time() - 1)
    refused = await http.get(SSE, headers=expired)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert "expired" in refused.text
    # A catch-up read is Envoy's to judge.
    assert (await http.get("/v1/stream/chat/x?offset=-1", headers=expired)).status_code == 200
    assert [s["query_string"] for s in app.scopes] == [b"offset=-1"]


def test_no_cap_by_zero() -> None:
    guard = GatewayGuard(max_live_reads_per_sub=0)
    scope: Any = {
        "type": "http",
        "method": "GET",
        "path": "/v1/stream/chat/x",
        "query_string": b"offset=-1&live=sse",
        "headers": [(b"x-jwt-payload", claims()["X-JWT-Payload"].encode())],
    }
    for _ in range(5):
        assert guard.check(dict(scope)) is None
