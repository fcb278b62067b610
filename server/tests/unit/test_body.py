"""Reading a request body under a size limit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from ds_server.routes._body import read_body
from ds_server.routes._request import BadRequest
from ds_server.stores.errors import PayloadTooLarge

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


class FakeRequest:
    """Just what read_body uses: headers and a body stream."""

    def __init__(self, parts: list[bytes], content_length: str | None = None) -> None:
        self.headers = {} if content_length is None else {"content-length": content_length}
        self.parts = parts
        self.consumed = 0

    async def stream(self) -> AsyncIterator[bytes]:
        for part in self.parts:
            self.consumed += 1
            yield part


async def read(request: FakeRequest, limit: int) -> bytes:
    request_: Any = request
    return await read_body(request_, limit)


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
