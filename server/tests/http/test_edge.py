"""The edge: security headers on every response, errors included; hooks; other scopes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest
from ds_server import create_app
from ds_server.app import asgi_app
from ds_server.edge.cors import Cors
from ds_server.edge.layer import Edge

if TYPE_CHECKING:
    from collections.abc import Callable

    from ds_server.settings import Settings

    from conftest import Api

SECURITY = {"x-content-type-options": "nosniff", "cross-origin-resource-policy": "cross-origin"}


def has_security_headers(response: httpx.Response) -> bool:
    return all(response.headers.get(name) == value for name, value in SECURITY.items())


@pytest.mark.parametrize(
    ("method", "path", "query", "status"),
    [
        ("PUT", "a", "", 201),
        ("GET", "a", "", 200),
        ("HEAD", "a", "", 200),
        ("GET", "missing", "", 404),
        ("GET", "a", "offset=bad", 400),
        ("POST", "a", "", 400),
        ("PATCH", "a", "", 405),
        ("DELETE", "a", "", 204),
    ],
)
def test_every_response_has_security_headers(
    api: Api, method: str, path: str, query: str, status: int
) -> None:
    if method != "PUT":
        api.put("a")
    response = api.request(method, path, query=query)
    assert response.status_code == status
    assert has_security_headers(response)


def test_unrouted_paths_have_security_headers(api: Api) -> None:
    response = api.client.get("/nowhere")
    assert response.status_code == 404
    assert has_security_headers(response)


def test_long_poll_and_sse_have_security_headers(api: Api) -> None:
    api.put("a", Stream_Closed="true")
    for query in ("offset=now&live=long-poll", "offset=now&live=sse"):
        assert has_security_headers(api.get("a", query))


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


class _NoStreams:
    """A handler that serves nothing itself."""

    def route(self, scope: Any) -> None:
        return None

    async def serve(self, route: object, request: Any) -> Any:
        raise AssertionError("never routed")


async def test_lifespan_passes_through_and_websockets_are_closed() -> None:
    seen: list[str] = []
    sent: list[Any] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])
        await send({"type": "lifespan.startup.complete"})

    async def receive() -> Any:
        return {"type": "lifespan.startup"}

    async def send(message: Any) -> None:
        sent.append(message)

    edge = Edge(inner, _NoStreams(), Cors([]))
    await edge({"type": "lifespan"}, receive, send)  # type: ignore[arg-type]
    await edge({"type": "websocket", "path": "/v1/stream/x", "headers": []}, receive, send)  # type: ignore[arg-type]
    assert seen == ["lifespan"]
    assert sent == [
        {"type": "lifespan.startup.complete"},
        {"type": "websocket.close", "code": 1008, "reason": ""},
    ]


class Recorder:
    """Request hooks that write down what they are told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, int | None]] = []

    def request_started(self, scope: Any, started: float) -> None:
        self.events.append(("started", scope["path"], None))
        self.started = started

    def response_started(self, scope: Any, started: float, status: int) -> None:
        assert started == self.started
        self.events.append(("response", scope["path"], status))

    def request_finished(self, scope: Any, started: float, status: int) -> None:
        assert started == self.started
        self.events.append(("finished", scope["path"], status))


class Finished:
    """A hook told only when requests end."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    def request_finished(self, scope: Any, started: float, status: int) -> None:
        self.events.append((scope["path"], status))


async def test_hooks_see_every_request_and_its_status(
    settings_factory: Callable[..., Settings],
) -> None:
    recorder, finished = Recorder(), Finished()
    app = asgi_app(create_app(settings_factory(), hooks=[recorder, finished]))
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    preflight = {"Origin": "https://a.example", "Access-Control-Request-Method": "PUT"}
    async with httpx.AsyncClient(transport=transport, base_url="http://test.local") as http:
        await http.put("/v1/stream/hooks/a", headers={"Content-Type": "text/plain"})
        await http.get("/v1/stream/hooks/missing")
        await http.get("/healthz")
        await http.options("/v1/stream/hooks/a", headers=preflight)
    expected = []
    for path, status in [
        ("/v1/stream/hooks/a", 201),
        ("/v1/stream/hooks/missing", 404),
        ("/healthz", 200),
        ("/v1/stream/hooks/a", 204),
    ]:
        expected += [
            ("started", path, None),
            ("response", path, status),
            ("finished", path, status),
        ]
    assert recorder.events == expected
    assert finished.events == [(path, status) for _, path, status in expected[2::3]]
