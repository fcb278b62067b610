"""ds-sync's requests to the server carry the token its file holds now, read again after a 401."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import httpx
import pytest
from ds_sync.server_api import ServerApi, ServerError
from durable_sessions.http1 import Http1Client
from durable_sessions.tokens import token_provider

if TYPE_CHECKING:
    from pathlib import Path


def _api(http: httpx.AsyncClient, token: Path | None) -> ServerApi:
    return ServerApi(http, "http://envoy:8080", token_provider(token), Http1Client())


async def test_a_renewed_file_is_sent_from_the_next_request_on(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("first\n")
    seen: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return httpx.Response(404)

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        api = _api(http, token)
        assert await api.head("a") is None
        token.write_text("second, renewed\n")
        assert await api.head("a") is None
    assert seen == ["Bearer first", "Bearer second, renewed"]


async def test_a_401_reads_the_file_again_for_the_retry(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("old")

    def answer(request: httpx.Request) -> httpx.Response:
        if request.headers.get("authorization") == "Bearer old":
            # Renewed meanwhile, in a way a stat cannot see (same size, same mtime).
            before = token.stat()
            token.write_text("new")
            os.utime(token, ns=(before.st_atime_ns, before.st_mtime_ns))
            return httpx.Response(401, text="token expired")
        return httpx.Response(404)

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        api = _api(http, token)
        with pytest.raises(ServerError) as refused:
            await api.head("a")
        assert refused.value.status == 401
        assert api.headers == {"Authorization": "Bearer new"}
        assert await api.head("a") is None


async def test_no_token_sends_no_authorization() -> None:
    seen: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return httpx.Response(404)

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        api = _api(http, None)
        assert api.headers == {}
        assert await api.head("a") is None
    assert seen == [None]
