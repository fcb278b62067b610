"""AsyncStreamServer's token: read from its source on every request, refreshed after a 401
(the request then goes once more), on the httpx calls and on the lean ones alike."""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TYPE_CHECKING

import httpx
import pytest
from durable_sessions.async_server import AsyncStreamServer, UnexpectedStatusError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path


@contextlib.asynccontextmanager
async def _mocked(
    token: Path | None, answer: Callable[[str | None], httpx.Response]
) -> AsyncIterator[tuple[AsyncStreamServer, list[str | None]]]:
    """A server whose httpx calls ``answer`` answers from each request's Authorization;
    and the Authorizations seen, in order."""
    seen: list[str | None] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return answer(seen[-1])

    async with httpx.AsyncClient(transport=httpx.MockTransport(respond)) as http:
        yield AsyncStreamServer("http://envoy:8080", token=token, http=http), seen


def _renew_unseen(token: Path, text: str) -> None:
    """Rewrite the token file in a way a stat cannot see (same size, same mtime)."""
    before = token.stat()
    token.write_text(text)
    os.utime(token, ns=(before.st_atime_ns, before.st_mtime_ns))


async def test_a_renewed_file_is_sent_from_the_next_request_on(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("first\n")
    async with _mocked(token, lambda _: httpx.Response(404)) as (server, seen):
        assert await server.head("a") is None
        token.write_text("second, renewed\n")
        assert await server.head("a") is None
        assert await server.auth_headers() == {"Authorization": "Bearer second, renewed"}
    assert seen == ["Bearer first", "Bearer second, renewed"]


async def test_a_401_reads_the_file_again_and_retries_once(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("old")

    def answer(authorization: str | None) -> httpx.Response:
        if authorization == "Bearer old":
            _renew_unseen(token, "new")
            return httpx.Response(401, text="token expired")
        return httpx.Response(404)

    async with _mocked(token, answer) as (server, seen):
        assert await server.head("a") is None
    assert seen == ["Bearer old", "Bearer new"]


async def test_a_401_with_no_other_token_stands(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("revoked")
    refusal = {"error": {"code": "UNAUTHORIZED", "message": "no"}}
    async with _mocked(token, lambda _: httpx.Response(401, json=refusal)) as (server, seen):
        with pytest.raises(UnexpectedStatusError) as refused:
            await server.head("a")
    assert (refused.value.status, refused.value.code) == (401, "UNAUTHORIZED")
    assert seen == ["Bearer revoked"]


async def test_no_token_sends_no_authorization() -> None:
    async with _mocked(None, lambda _: httpx.Response(404)) as (server, seen):
        assert await server.auth_headers() == {}
        assert await server.head("a") is None
    assert seen == [None]


@contextlib.asynccontextmanager
async def _raw_server(answer: Callable[[str], bytes]) -> AsyncIterator[str]:
    """An HTTP/1.1 server on a free loopback port: ``answer`` maps a request's
    Authorization to the whole response."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                fields = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
                await reader.readexactly(int(fields.get("Content-Length", "0")))
                writer.write(answer(fields.get("Authorization", "")))
                await writer.drain()
        except asyncio.IncompleteReadError:
            pass  # the client closed the connection
        finally:
            writer.close()

    listener = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        listener.close()
        await listener.wait_closed()


async def test_the_lean_calls_refresh_after_a_401_too(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("old")
    seen: list[str] = []

    def answer(authorization: str) -> bytes:
        seen.append(authorization)
        if authorization == "Bearer old":
            _renew_unseen(token, "new")
            return b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n"
        return b"HTTP/1.1 204 No Content\r\n\r\n"

    async with _raw_server(answer) as url, AsyncStreamServer(url, token=token) as server:
        await server.append_json("s", b"[1]")
    assert seen == ["Bearer old", "Bearer new"]
