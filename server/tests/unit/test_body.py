"""The one body reader (``edge.http``): a request body under a size limit."""

from __future__ import annotations

from typing import Any

import pytest
from ds_server.edge.http import HttpRequest
from ds_server.protocol.errors import BadRequest
from ds_server.stores.errors import PayloadTooLarge


class FakeRequest:
    """An ASGI request: its Content-Length and the body messages a client sends."""

    def __init__(
        self, parts: list[bytes], content_length: str | None = None, *, complete: bool = True
    ) -> None:
        self.headers = (
            [] if content_length is None else [(b"content-length", content_length.encode())]
        )
        self.parts = parts
        self.complete = complete
        self.consumed = 0

    async def receive(self) -> dict[str, Any]:
        if self.consumed == len(self.parts):
            if not self.complete:
                return {"type": "http.disconnect"}
            return {"type": "http.request", "body": b"", "more_body": False}
        self.consumed += 1
        more = self.consumed < len(self.parts) or not self.complete
        return {"type": "http.request", "body": self.parts[self.consumed - 1], "more_body": more}


async def read(request: FakeRequest, limit: int) -> bytes:
    scope: Any = {"method": "POST", "query_string": b"", "headers": request.headers}
    return await HttpRequest(scope, request.receive).body(limit)


async def test_whole_body() -> None:
    assert await read(FakeRequest([b"ab", b"cd"], "4"), 10) == b"abcd"
    assert await read(FakeRequest([b"ab", b"cd"]), 4) == b"abcd"
    assert await read(FakeRequest([]), 0) == b""


async def test_declared_length_over_limit_is_refused_before_reading() -> None:
    request = FakeRequest([b"x" * 11], "11")
    with pytest.raises(PayloadTooLarge):
        await read(request, 10)
    assert request.consumed == 0


async def test_streamed_body_over_limit_stops_early() -> None:
    request = FakeRequest([b"x" * 6, b"x" * 6, b"x" * 6])
    with pytest.raises(PayloadTooLarge):
        await read(request, 10)
    assert request.consumed == 2


async def test_understated_length_is_still_capped() -> None:
    with pytest.raises(PayloadTooLarge):
        await read(FakeRequest([b"x" * 20], "1"), 10)


@pytest.mark.parametrize("declared", ["", "abc", "-1", "1.5", " 5", "\u0665", "0x10"])
async def test_malformed_content_length(declared: str) -> None:
    with pytest.raises(BadRequest):
        await read(FakeRequest([b"12345"], declared), 10)


async def test_absurdly_long_content_length_is_a_client_error() -> None:
    # More digits than Python converts to int by default (4300).
    with pytest.raises((BadRequest, PayloadTooLarge)):
        await read(FakeRequest([b"x"], "9" * 5000), 10)


async def test_a_body_cut_short_by_the_client_leaving_is_refused() -> None:
    # Never handed on in part: an append of half a body would be stored as if whole.
    with pytest.raises(BadRequest):
        await read(FakeRequest([b"half"], "8", complete=False), 10)
