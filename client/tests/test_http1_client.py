"""Http1Client: requests on kept-alive connections, against a real ds-server and small local
servers for what ds-server never does (chunked answers, closing idle connections)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import httpx
from durable_sessions.http1 import Http1Client

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from conftest import NewStream


async def test_appends_reads_and_heads_match_httpx(new_stream: NewStream) -> None:
    url = new_stream()
    client = Http1Client()
    try:
        appended = await client.request(
            "POST", url, content=b'[{"a": 1}]', headers={"Content-Type": "application/json"}
        )
        assert appended.status in (200, 204)
        read = await client.request("GET", url + "?offset=-1")
        async with httpx.AsyncClient() as http:
            expected = await http.get(url, params={"offset": "-1"})
        assert (read.status, read.body) == (200, expected.content)
        assert read.headers["stream-next-offset"] == expected.headers["stream-next-offset"]
        head = await client.request("HEAD", url)
        assert (head.status, head.body) == (200, b"")
        missing = await client.request("GET", url + "-missing?offset=-1")
        assert missing.status == 404
    finally:
        await client.aclose()


async def test_connections_are_kept_and_reused(new_stream: NewStream) -> None:
    url = new_stream()
    client = Http1Client()
    try:
        for _ in range(5):
            assert (await client.request("HEAD", url)).status == 200
        assert sum(len(idle) for idle in client._idle.values()) == 1
    finally:
        await client.aclose()


async def _serve(handler: Callable[..., Awaitable[None]]) -> tuple[asyncio.Server, str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}/x"


async def test_a_chunked_answer_is_read_whole() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nTrailer: x\r\n\r\n"
        )
        await writer.drain()
        writer.close()

    server, url = await _serve(handler)
    async with server:
        client = Http1Client()
        response = await client.request("GET", url)
        await client.aclose()
    assert (response.status, response.body) == (200, b"hello world")


async def test_a_connection_closed_while_idle_is_replaced_without_an_error() -> None:
    served: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # Answers one request, then closes the connection a moment later (an idle timeout).
        try:
            await reader.readuntil(b"\r\n\r\n")
            served.append(1)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
            await asyncio.sleep(0.05)
        finally:
            writer.close()

    server, url = await _serve(handler)
    async with server:
        client = Http1Client()
        first = await client.request("GET", url)
        await asyncio.sleep(0.2)
        second = await client.request("GET", url)
        await client.aclose()
        await asyncio.sleep(0.2)  # the handler's own close
    assert (first.body, second.body, len(served)) == (b"ok", b"ok", 2)


async def test_an_answer_without_length_ends_with_the_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 500 Oops\r\nConnection: close\r\n\r\nbroken")
        await writer.drain()
        writer.close()

    server, url = await _serve(handler)
    async with server:
        client = Http1Client()
        response = await client.request("POST", url, content=b"x")
        await client.aclose()
    assert (response.status, response.text) == (500, "broken")
    assert not any(client._idle.values())
