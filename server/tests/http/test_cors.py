"""CORS: preflights, exposed protocol headers, configured origins."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ds_server.settings import HttpSection

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

    from conftest import Api

ORIGIN = "https://app.example"


def preflight(api: Api, origin: str, method: str, headers: str) -> httpx.Response:
    return api.request(
        "OPTIONS",
        "a",
        Origin=origin,
        Access_Control_Request_Method=method,
        Access_Control_Request_Headers=headers,
    )


def test_preflight_allows_if_none_match(api: Api) -> None:
    response = preflight(api, ORIGIN, "GET", "If-None-Match")
    assert response.status_code in (200, 204)
    assert response.headers["access-control-allow-origin"] in ("*", ORIGIN)
    assert "if-none-match" in response.headers["access-control-allow-headers"].lower()
    assert "GET" in response.headers["access-control-allow-methods"]


@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE", "HEAD"])
def test_preflight_allows_protocol_requests(api: Api, method: str) -> None:
    headers = "Content-Type, Producer-Id, Producer-Epoch, Producer-Seq, Stream-Closed, Stream-TTL"
    response = preflight(api, ORIGIN, method, headers)
    assert response.status_code in (200, 204)
    assert method in response.headers["access-control-allow-methods"]
    allowed = response.headers["access-control-allow-headers"].lower()
    for name in headers.lower().split(", "):
        assert name in allowed


def test_responses_expose_protocol_headers(api: Api) -> None:
    api.put("a", b"x", Content_Type="text/plain")
    response = api.get("a", Origin=ORIGIN)
    assert response.status_code == 200
    header = response.headers["access-control-expose-headers"]
    exposed = {name.strip().lower() for name in header.split(",")}
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


def test_errors_carry_cors_headers(api: Api) -> None:
    response = api.get("missing", Origin=ORIGIN)
    assert response.status_code == 404
    assert response.headers["access-control-allow-origin"] in ("*", ORIGIN)


def test_configured_origins(make_api: Callable[..., Api]) -> None:
    api = make_api(http=HttpSection(cors_origins=f"{ORIGIN}, https://other.example"))
    api.put("a", b"x", Content_Type="text/plain")
    assert api.get("a", Origin=ORIGIN).headers["access-control-allow-origin"] == ORIGIN
    assert "access-control-allow-origin" not in api.get("a", Origin="https://evil.example").headers
    assert preflight(api, "https://evil.example", "GET", "If-None-Match").status_code >= 400
    other = preflight(api, "https://other.example", "GET", "If-None-Match")
    assert other.headers["access-control-allow-origin"] == "https://other.example"


def test_origin_list_is_comma_separated() -> None:
    section = HttpSection(cors_origins=" https://a.example ,https://b.example,, ")
    assert section.cors_origins == ["https://a.example", "https://b.example"]
