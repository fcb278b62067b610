"""The lean HTTP protocol answers every exchange byte for byte as uvicorn's own does.

Both protocols serve the same small ASGI app on real loopback sockets; each
exchange is sent raw to each, and the responses (less the Date header) must
match. Keep-alive, the one place the lean protocol works differently, has
its own tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
from typing import TYPE_CHECKING, Any

import pytest
import uvicorn
from ds_server.http_protocol import ConnectionLimits, LeanHttpToolsProtocol

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    Message = dict[str, Any]

KEEP_ALIVE_SECS = 0.5
_DATE = re.compile(rb"^date: [^\r]*\r\n", re.MULTILINE)


async def _app(scope: Message, receive: Any, send: Any) -> None:
    """Echoes what it was given; a few paths send unusual responses."""
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    path = scope["path"]
    if path == "/chunked":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"one ", "more_body": True})
        await send({"type": "http.response.body", "body": b"two"})
    elif path == "/bad-header":
        headers = [(b"x-bad", b"a\nb")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
    elif path == "/empty":
        await send({"type": "http.response.start", "status": 204, "headers": [(b"X-Mixed", b"1")]})
        await send({"type": "http.response.body", "body": b""})
    elif path == "/fail":
        raise RuntimeError("the app failed")
    elif path in ("/too-long", "/too-short", "/after-complete"):
        length = {"/too-long": b"2", "/too-short": b"5", "/after-complete": b"2"}[path]
        headers = [(b"content-length", length)]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"abc" if path == "/too-long" else b"ab"})
        await send({"type": "http.response.body", "body": b""})
    else:
        echo = {
            "scope": {
                key: scope[key]
                for key in ("type", "asgi", "http_version", "method", "scheme", "path", "root_path")
            },
            "raw_path": scope["raw_path"].decode("latin-1"),
            "query_string": scope["query_string"].decode("latin-1"),
            "headers": [[n.decode("latin-1"), v.decode("latin-1")] for n, v in scope["headers"]],
            "body_length": len(body),
            "body_type": type(body).__name__,
            "state": scope["state"],
        }
        payload = json.dumps(echo).encode()
        length = b"%d" % len(payload)
        headers = [(b"content-type", b"application/json"), (b"content-length", length)]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


@contextlib.asynccontextmanager
async def _server(http: Any, app: Any = _app) -> AsyncIterator[uvicorn.Server]:
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        http=http,
        ws="none",
        lifespan="off",
        log_level="critical",
        access_log=False,
        timeout_keep_alive=KEEP_ALIVE_SECS,
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "the server did not start"
        await asyncio.sleep(0.01)
    try:
        yield server
    finally:
        server.should_exit = True
        # A generous bound: a shutdown that hangs fails here instead of the run.
        await asyncio.wait_for(task, 30)


def _port(server: uvicorn.Server) -> int:
    port: int = server.servers[0].sockets[0].getsockname()[1]
    return port


@contextlib.asynccontextmanager
async def _serving(http: Any) -> AsyncIterator[int]:
    async with _server(http) as server:
        yield _port(server)


async def _exchange(port: int, *parts: bytes, expect_interim: bool = False) -> bytes:
    """Send ``parts`` on a fresh connection, close the write side, read until the server closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(parts[0])
        if expect_interim:
            interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        for part in parts[1:]:
            writer.write(part)
        await writer.drain()
        received = b""
        with contextlib.suppress(TimeoutError):
            # Keep-alive connections stay open: read until they go quiet.
            while chunk := await asyncio.wait_for(reader.read(1 << 20), 0.3):
                received += chunk
        return _DATE.sub(b"", received)
    finally:
        writer.close()


def _post(path: str, body: bytes, *headers: bytes) -> bytes:
    head = b"POST %s HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n" % (path.encode(), len(body))
    return head + b"".join(h + b"\r\n" for h in headers) + b"\r\n" + body


EXCHANGES: dict[str, tuple[bytes, ...]] = {
    "get with a query": (b"GET /echo?x=1&y=%20 HTTP/1.1\r\nHost: t\r\nX-Case: AbC\r\n\r\n",),
    "post": (_post("/echo", b"x" * 100, b"Content-Type: application/octet-stream"),),
    "pipelined": (
        _post("/echo", b"a" * 10) + _post("/echo", b"b" * 20) + b"GET /e HTTP/1.1\r\n\r\n",
    ),
    "body in pieces": (
        b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 9\r\n\r\nabc",
        b"def",
        b"ghi",
    ),
    "chunked request": (
        b"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n",
    ),
    "large body": (_post("/echo", b"z" * (3 * 1024 * 1024 + 17)),),
    "chunked response": (b"GET /chunked HTTP/1.1\r\nHost: t\r\n\r\n",),
    "head": (b"HEAD /echo HTTP/1.1\r\nHost: t\r\n\r\n",),
    "no content": (b"GET /empty HTTP/1.1\r\nHost: t\r\n\r\n",),
    "invalid response header": (b"GET /bad-header HTTP/1.1\r\nHost: t\r\n\r\n",),
    "app error": (b"GET /fail HTTP/1.1\r\nHost: t\r\n\r\n",),
    "body longer than content-length": (b"GET /too-long HTTP/1.1\r\nHost: t\r\n\r\n",),
    "body shorter than content-length": (b"GET /too-short HTTP/1.1\r\nHost: t\r\n\r\n",),
    "body after the response ended": (b"GET /after-complete HTTP/1.1\r\nHost: t\r\n\r\n",),
    "head with a body": (b"HEAD /too-long HTTP/1.1\r\nHost: t\r\n\r\n",),
    "http/1.0": (b"GET /echo HTTP/1.0\r\nHost: t\r\n\r\n",),
    "connection close": (b"GET /echo HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",),
    "percent-encoded path": (b"GET /a%20b/%E2%9C%93 HTTP/1.1\r\nHost: t\r\n\r\n",),
    "malformed request": (b"GET /echo HTTP/1.1\r\nHost t\r\n\r\n",),
}


@pytest.mark.parametrize("name", list(EXCHANGES))
async def test_responses_match_uvicorns_own_protocol(name: str) -> None:
    parts = EXCHANGES[name]
    async with _serving("httptools") as port:
        expected = await _exchange(port, *parts)
    async with _serving(LeanHttpToolsProtocol) as port:
        actual = await _exchange(port, *parts)
    assert actual == expected
    assert expected or name == "invalid response header"


async def test_expect_100_continue_is_answered_before_the_body() -> None:
    head = b"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
    async with _serving(LeanHttpToolsProtocol) as port:
        response = await _exchange(port, head, b"hello", expect_interim=True)
    assert response.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b'"body_length": 5' in response


async def test_an_idle_connection_is_closed_after_the_keep_alive_timeout() -> None:
    async with _serving(LeanHttpToolsProtocol) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /empty HTTP/1.1\r\nHost: t\r\n\r\n")
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 204")
        # The server closes: read() returns b"" rather than timing out.
        assert await asyncio.wait_for(reader.read(), KEEP_ALIVE_SECS * 10) == b""
        writer.close()


async def test_a_busy_connection_outlives_the_keep_alive_timeout() -> None:
    async with _serving(LeanHttpToolsProtocol) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        # Requests for four times the timeout, each after a pause shorter than it.
        for _ in range(16):
            writer.write(b"GET /empty HTTP/1.1\r\nHost: t\r\n\r\n")
            assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 204")
            await asyncio.sleep(KEEP_ALIVE_SECS / 4)
        writer.close()


async def test_a_connection_has_one_task_for_all_its_requests_until_it_closes() -> None:
    async with _server(LeanHttpToolsProtocol) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", _port(server))
        for _ in range(3):
            writer.write(b"GET /empty HTTP/1.1\r\nHost: t\r\n\r\n")
            assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 204")
            assert len(server.server_state.tasks) == 1
        (worker,) = server.server_state.tasks
        writer.close()
        await asyncio.wait_for(worker, 30)  # ends once the server sees the close
        assert not server.server_state.tasks


async def test_shutdown_closes_an_idle_keep_alive_connection() -> None:
    async with _server(LeanHttpToolsProtocol) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", _port(server))
        writer.write(b"GET /empty HTTP/1.1\r\nHost: t\r\n\r\n")
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 204")
    # Leaving the block shut the server down; the open connection did not hold it.
    assert await reader.read() == b""
    assert not server.server_state.tasks
    writer.close()


async def test_a_request_still_running_at_shutdown_is_cancelled_and_its_task_ends() -> None:
    started = asyncio.Event()

    async def endless(scope: Message, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            started.set()
            await asyncio.Event().wait()

    async with _server(LeanHttpToolsProtocol, endless) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", _port(server))
        writer.write(b"GET /forever HTTP/1.1\r\nHost: t\r\n\r\n")
        await started.wait()
    # The graceful timeout passed, the request was cancelled, the connection closed.
    assert (await reader.read()).startswith(b"HTTP/1.1 200 OK\r\n")
    assert not server.server_state.tasks
    writer.close()


# Limits uvicorn doesn't have: request heads must arrive in time and within a
# size, and a client that takes none of its response is disconnected.
LIMITS = ConnectionLimits(request_head_secs=0.5, stalled_reader_secs=0.5)
LIMITED = LeanHttpToolsProtocol.with_limits(LIMITS)
BIG_BODY = 32 * 1024 * 1024


async def _big(scope: Message, receive: Any, send: Any) -> None:
    """Answers every request with a 32 MiB body, 64 KiB at a time."""
    if scope["type"] != "http":
        return
    headers = [(b"content-length", b"%d" % BIG_BODY)]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    piece = b"x" * 65536
    for _ in range(BIG_BODY // len(piece)):
        await send({"type": "http.response.body", "body": piece, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def _read_until_closed(reader: asyncio.StreamReader) -> bytes:
    """Everything until the server closes (a reset counts as a close); 10 s at most."""
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := await asyncio.wait_for(reader.read(1 << 20), 10):
            received += chunk
    return received


async def test_a_connection_that_sends_nothing_is_closed_after_the_head_timeout() -> None:
    async with _serving(LIMITED) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await _read_until_closed(reader) == b""
        writer.close()


async def test_a_head_sent_a_byte_at_a_time_gets_408_at_the_head_timeout() -> None:
    loop = asyncio.get_running_loop()
    async with _serving(LIMITED) as port:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.setblocking(False)
            with contextlib.suppress(ConnectionError):
                for byte in b"GET /echo HTTP/1.1\r\nHost: t\r\nX-Slow: ":
                    await loop.sock_sendall(sock, bytes([byte]))
                    await asyncio.sleep(0.05)  # ~2 s in all, four times the limit
            response = b""
            with contextlib.suppress(ConnectionError):
                while chunk := await asyncio.wait_for(loop.sock_recv(sock, 4096), 10):
                    response += chunk
    assert response.startswith(b"HTTP/1.1 408 Request Timeout\r\n")


async def test_a_head_that_arrives_in_time_in_pieces_is_served() -> None:
    async with _serving(LIMITED) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for piece in (b"GET /echo HTTP/1.1\r\n", b"Host: t\r\n", b"\r\n"):
            writer.write(piece)
            await asyncio.sleep(0.1)
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200 OK\r\n")
        writer.close()


async def test_a_head_over_64_kib_gets_431() -> None:
    async with _serving(LIMITED) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /echo HTTP/1.1\r\nHost: t\r\n")
        with contextlib.suppress(ConnectionResetError):
            for index in range(200):  # 200 KiB of headers, never finished
                writer.write(b"X-Filler-%03d: %s\r\n" % (index, b"y" * 1000))
                await writer.drain()
        response = await _read_until_closed(reader)
        assert response.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
        writer.close()


async def test_many_pipelined_requests_in_one_read_are_not_taken_for_a_big_head() -> None:
    request = b"GET /empty HTTP/1.1\r\nHost: t\r\n\r\n"
    count = 3000  # ~100 KiB sent at once, the last head cut in two
    async with _serving(LIMITED) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request * count + request[:10])
        await asyncio.sleep(0.1)
        writer.write(request[10:])
        for _ in range(count + 1):
            assert (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).startswith(
                b"HTTP/1.1 204"
            )
        writer.close()


async def test_a_client_that_stops_reading_is_disconnected() -> None:
    async with _server(LIMITED, _big) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", _port(server))
        writer.write(b"GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
        await asyncio.sleep(2.0)  # reads nothing: four times the limit
        received = await _read_until_closed(reader)
        assert received.startswith(b"HTTP/1.1 200 OK\r\n")
        assert len(received) < BIG_BODY
        # The response's task ended too: nothing is left waiting for the client.
        for _ in range(100):
            if not server.server_state.tasks:
                break
            await asyncio.sleep(0.05)
        assert not server.server_state.tasks
        writer.close()


async def test_a_client_that_reads_slowly_but_steadily_is_not_disconnected() -> None:
    loop = asyncio.get_running_loop()
    async with _server(LIMITED, _big) as server:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, ("127.0.0.1", _port(server)))
            await loop.sock_sendall(sock, b"GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
            await asyncio.sleep(0.3)  # the server's buffers fill, and its writes pause
            received = 0
            # ~40 KiB/s for three times the limit: slow, but never nothing for long.
            for _ in range(15):
                chunk = await asyncio.wait_for(loop.sock_recv(sock, 4096), 5)
                assert chunk, "the server closed a connection whose client was reading"
                received += len(chunk)
                await asyncio.sleep(0.1)
            # Then it reads the rest quickly: every byte arrives.
            while received < BIG_BODY:
                chunk = await asyncio.wait_for(loop.sock_recv(sock, 1 << 20), 10)
                assert chunk, "the server closed the connection before the end"
                received += len(chunk)
        finally:
            sock.close()
