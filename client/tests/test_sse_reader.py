"""SseReader: one SSE read on a plain asyncio connection, against a real ds-server."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import httpx
import pytest
from durable_sessions import Update, follow
from durable_sessions.sse_reader import SseReader, SseUnavailableError
from durable_streams import StreamNotFoundError

if TYPE_CHECKING:
    from conftest import NewStream

JSON = {"Content-Type": "application/json"}


def _append(url: str, body: bytes) -> None:
    assert httpx.post(url, content=body, headers=JSON).status_code in (200, 204)


class Collected(list[Update]):
    """Updates as they arrive; ``until(n)`` waits for n messages in all."""

    def __init__(self) -> None:
        super().__init__()
        self._arrived = asyncio.Event()

    def add(self, update: Update) -> None:
        self.append(update)
        self._arrived.set()

    async def until(self, count: int) -> None:
        async with asyncio.timeout(10):
            while sum(len(u.messages) for u in self) < count:
                self._arrived.clear()
                await self._arrived.wait()


async def test_updates_carry_each_message_as_stored_and_resume_where_they_end(
    new_stream: NewStream,
) -> None:
    url = new_stream()
    _append(url, b'[{"a": 1}, {"b": "x\\"y"}]')
    _append(url, b'["\\u00e9t\\u00e9", 2.50, null]')
    updates = Collected()
    reader = SseReader(url, "-1", updates.add)
    task = asyncio.ensure_future(reader.read())
    await updates.until(5)
    reader.close()
    await task
    messages = [m for u in updates for m in u.messages]
    # The same bytes follow() yields (the server's own text of each message).
    expected: list[bytes] = []
    async for event in follow(url, offset="-1", live="long-poll"):
        assert isinstance(event, Update)
        expected += event.messages
        if event.up_to_date:
            break
    assert messages == expected
    assert reader.offset == updates[-1].next_offset
    # A new reader from that offset sees only what comes after.
    _append(url, b'[{"c": 3}]')
    later = Collected()
    again = SseReader(url, reader.offset, later.add)
    task = asyncio.ensure_future(again.read())
    await later.until(1)
    again.close()
    await task
    assert [m for u in later for m in u.messages] == [b'{"c": 3}']


async def test_a_closed_stream_ends_the_read(new_stream: NewStream) -> None:
    url = new_stream()
    _append(url, b'[{"a": 1}]')
    async with httpx.AsyncClient() as http:
        closed = await http.post(url, headers={**JSON, "Stream-Closed": "true"})
    assert closed.status_code in (200, 204)
    updates: list[Update] = []
    async with asyncio.timeout(10):
        await SseReader(url, "-1", updates.append).read()
    assert updates[-1].closed
    assert [m for u in updates for m in u.messages] == [b'{"a": 1}']


async def test_a_missing_stream_is_not_found(new_stream: NewStream) -> None:
    url = new_stream() + "-missing"
    with pytest.raises(StreamNotFoundError):
        await SseReader(url, "-1", lambda _: None).read()


async def test_a_paused_reader_takes_nothing_until_resumed(new_stream: NewStream) -> None:
    url = new_stream()
    updates = Collected()
    reader = SseReader(url, "-1", updates.add)
    reader.pause()
    task = asyncio.ensure_future(reader.read())
    await asyncio.sleep(0.3)
    _append(url, b'[{"a": 1}]')
    await asyncio.sleep(0.3)
    assert not [m for u in updates for m in u.messages]
    reader.resume()
    await updates.until(1)
    reader.close()
    await task


async def test_the_server_ending_the_connection_ends_the_read(
    new_stream: NewStream, sse_reconnect_secs: float
) -> None:
    url = new_stream()
    _append(url, b'[{"a": 1}]')
    updates: list[Update] = []
    async with asyncio.timeout(sse_reconnect_secs + 10):
        await SseReader(url, "-1", updates.append).read()
    assert [m for u in updates for m in u.messages] == [b'{"a": 1}']


async def test_an_answer_that_is_not_sse_is_unavailable(
    new_stream: NewStream, server_url: str
) -> None:
    # The server's health check answers plain JSON to any GET.
    with pytest.raises(SseUnavailableError):
        await SseReader(f"{server_url}/healthz", "-1", lambda _: None).read()


async def test_events_split_anywhere_and_any_line_ending_parse_the_same() -> None:
    """A local server sends one answer byte by byte, with CR, LF and CRLF line ends."""
    body = (
        b": keep-alive\r\n\r\n"
        b'event: data\rdata:[{"a":\r\ndata: 1}]\r\r'
        b'event:control\ndata: {"streamNextOffset":"00000000000000000009"}\n\n'
        b"event: data\ndata:[2,3]\n\n"
        b'event: control\r\ndata:{"streamNextOffset":"00000000000000000012",\r\n'
        b'data:"streamClosed":true}\r\n\r\n'
    )
    chunked = b"".join(b"%x\r\n%s\r\n" % (1, body[i : i + 1]) for i in range(len(body)))
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    )

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        for byte in range(len(head + chunked)):
            writer.write((head + chunked)[byte : byte + 1])
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    updates: list[Update] = []
    async with server:
        async with asyncio.timeout(10):
            await SseReader(f"http://127.0.0.1:{port}/s", "-1", updates.append).read()
    assert [(u.messages, u.next_offset, u.closed) for u in updates] == [
        ([b'{"a":\n1}'], "00000000000000000009", False),
        ([b"2", b"3"], "00000000000000000012", True),
    ]
