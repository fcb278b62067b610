"""Security headers on every response of the served ASGI app, errors included."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest
from ds_server import create_app
from ds_server.app import asgi_app
from ds_server.middleware import security_headers

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.settings import Settings
    from litestar.testing import TestClient

SECURITY = {"x-content-type-options": "nosniff", "cross-origin-resource-policy": "cross-origin"}


def has_security_headers(response: Any) -> bool:
    return all(response.headers.get(name) == value for name, value in SECURITY.items())


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("PUT", "/v1/stream/a", 201),
        ("GET", "/v1/stream/a", 200),
        ("HEAD", "/v1/stream/a", 200),
        ("GET", "/v1/stream/missing", 404),
        ("GET", "/v1/stream/a?offset=bad", 400),
        ("POST", "/v1/stream/a", 400),
        ("PATCH", "/v1/stream/a", 405),
        ("GET", "/nowhere", 404),
        ("DELETE", "/v1/stream/a", 204),
    ],
)
def test_every_response_has_security_headers(
    client: TestClient[Any], method: str, path: str, status: int
) -> None:
    if method != "PUT":
        client.put("/v1/stream/a")
    response = client.request(method, path)
    assert response.status_code == status
    assert has_security_headers(response)


def test_long_poll_and_sse_have_security_headers(client: TestClient[Any]) -> None:
    client.put("/v1/stream/a", headers={"Stream-Closed": "true"})
    for query in ("offset=now&live=long-poll", "offset=now&live=sse"):
        assert has_security_headers(client.get(f"/v1/stream/a?{query}"))


async def test_headers_are_added_once_over_plain_asgi(
    settings_factory: Callable[..., Settings],
) -> None:
    # httpx's own ASGI transport, without the Litestar test client (or its lifespan).
    app = asgi_app(create_app(settings_factory()))
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://test.local") as http:
        response = await http.get("/healthz")
    assert response.status_code == 200
    for name, value in SECURITY.items():
        assert response.headers.get_list(name) == [value]


async def test_non_http_scopes_pass_through() -> None:
    seen: list[str] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])
        await send({"type": "lifespan.startup.complete"})

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "lifespan.startup"}

    await security_headers(inner)({"type": "lifespan"}, receive, send)
    assert seen == ["lifespan"]
    assert sent == [{"type": "lifespan.startup.complete"}]
