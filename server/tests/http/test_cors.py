"""CORS: preflights, exposed protocol headers, configured origins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from ds_server.settings import HttpSection

if TYPE_CHECKING:
    from collections.abc import Callable

    from litestar.testing import TestClient

STREAM = "/v1/stream/a"
ORIGIN = "https://app.example"


def preflight(client: TestClient[Any], origin: str, method: str, headers: str) -> Any:
    return client.options(
        STREAM,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": headers,
        },
    )


def test_preflight_allows_if_none_match(client: TestClient[Any]) -> None:
    response = preflight(client, ORIGIN, "GET", "If-None-Match")
    assert response.status_code in (200, 204)
    assert response.headers["access-control-allow-origin"] in ("*", ORIGIN)
    assert "if-none-match" in response.headers["access-control-allow-headers"].lower()
    assert "GET" in response.headers["access-control-allow-methods"]


@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE", "HEAD"])
def test_preflight_allows_protocol_requests(client: TestClient[Any], method: str) -> None:
    headers = "Content-Type, Producer-Id, Producer-Epoch, Producer-Seq, Stream-Closed, Stream-TTL"
    response = preflight(client, ORIGIN, method, headers)
    assert response.status_code in (200, 204)
    assert method in response.headers["access-control-allow-methods"]
    allowed = response.headers["access-control-allow-headers"].lower()
    for name in headers.lower().split(", "):
        assert name in allowed


def test_responses_expose_protocol_headers(client: TestClient[Any]) -> None:
    client.put(STREAM, content=b"x", headers={"Content-Type": "text/plain"})
    response = client.get(STREAM, headers={"Origin": ORIGIN})
    assert response.status_code == 200
    exposed = {
        name.strip().lower()
        for name in response.headers["access-control-expose-headers"].split(",")
    }
    for name in (
        "stream-next-offset",
        "stream-up-to-date",
        "stream-closed",
        "stream-cursor",
        "etag",
        "producer-epoch",
        "producer-seq",
        "producer-expected-seq",
        "producer-received-seq",
        "stream-sse-data-encoding",
    ):
        assert name in exposed


def test_errors_carry_cors_headers(client: TestClient[Any]) -> None:
    response = client.get("/v1/stream/missing", headers={"Origin": ORIGIN})
    assert response.status_code == 404
    assert response.headers["access-control-allow-origin"] in ("*", ORIGIN)


def test_configured_origins(make_client: Callable[..., TestClient[Any]]) -> None:
    client = make_client(http=HttpSection(cors_origins=f"{ORIGIN}, https://other.example"))
    client.put(STREAM, content=b"x", headers={"Content-Type": "text/plain"})
    allowed = client.get(STREAM, headers={"Origin": ORIGIN})
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    denied = client.get(STREAM, headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in denied.headers
    assert preflight(client, "https://evil.example", "GET", "If-None-Match").status_code >= 400
    ok = preflight(client, "https://other.example", "GET", "If-None-Match")
    assert ok.headers["access-control-allow-origin"] == "https://other.example"


def test_origin_list_is_comma_separated() -> None:
    assert HttpSection(cors_origins=" https://a.example ,https://b.example,, ").cors_origins == [
        "https://a.example",
        "https://b.example",
    ]
