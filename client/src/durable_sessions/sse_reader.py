"""One SSE read of a stream on a plain asyncio connection, an update per callback.

`follow()` and `sse_session()` read through httpx and httpx-sse: right for
a client following a few streams, but each SSE event passes through a
dozen layers of async generators (~150 µs of CPU here). A service that
follows hundreds of streams at once (ds-sync) spends most of its CPU
there. ``SseReader`` speaks HTTP/1.1 itself on an asyncio connection and
calls ``on_update`` from the event loop for each ``control`` event, with
the ``data`` events before it: no task switch and no generator per event.

It reads one connection and no more. Reconnecting when the server ends the
connection (its reconnect interval), bootstrapping after a 410, falling back
to long-poll where SSE is refused: that is the caller's, as ``follow()``
does it with httpx.
"""

from __future__ import annotations

import asyncio
import base64
from typing import TYPE_CHECKING, cast
from urllib.parse import quote, urlsplit

import msgspec

from durable_sessions._errors import http_error
from durable_sessions._http import shared_ssl_context
from durable_sessions._live import SseUnavailableError
from durable_sessions.events import Update
from durable_sessions.protocol.content_types import JSON, SSE, is_json, media_type
from durable_sessions.protocol.json_mode import JsonFramingError

if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable, Mapping

__all__ = ["SseReader", "SseUnavailableError", "split_json_payload"]

# Answers meaning "no SSE here" (a proxy or server without it): the caller falls back.
_NO_SSE_STATUSES = frozenset({400, 405, 406, 415, 501})
# A refused read's body is kept for the error, up to this much.
_ERROR_BODY_BYTES = 64 * 1024
_HEAD_LIMIT = 64 * 1024


class _Control(msgspec.Struct):
    streamNextOffset: str
    upToDate: bool | None = None
    streamClosed: bool | None = None


_decode_control = msgspec.json.Decoder(_Control).decode
_decode_array = msgspec.json.Decoder(list[msgspec.Raw]).decode


def split_json_payload(payload: bytes) -> list[bytes]:
    """The messages of one JSON array (an SSE ``data`` payload), each as its exact bytes."""
    try:
        return [bytes(raw) for raw in _decode_array(payload)]
    except msgspec.DecodeError as exc:
        raise JsonFramingError(str(exc)) from None


class SseReader:
    """Reads ``url`` from ``offset`` over SSE (``live=sse``) until the connection ends.

    ``on_update`` runs on the event loop for every ``control`` event, with the
    messages of the ``data`` events before it (for JSON streams one entry per
    message, as ``follow()`` yields them); ``offset`` is then the update's
    ``next_offset``, where a new reader resumes. An exception from
    ``on_update`` ends the read and is raised by ``read()``.
    """

    def __init__(
        self,
        url: str,
        offset: str,
        on_update: Callable[[Update], None],
        *,
        headers: Mapping[str, str] | None = None,
        content_type: str = JSON,
        connect_timeout_secs: float = 10.0,
        quiet_timeout_secs: float = 60.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.url = url
        self.offset = offset
        self.updates = 0
        self._on_update = on_update
        self._headers = dict(headers or {})
        self._json = is_json(content_type)
        self._content_type = content_type
        self._connect_timeout = connect_timeout_secs
        self._quiet_timeout = quiet_timeout_secs
        self._ssl_context = ssl_context
        self._protocol: _SseProtocol | None = None
        self._closed = False
        self.paused = False

    async def read(self) -> None:
        """Connect and read until the server ends the connection, the stream closes, or
        ``close()``.

        Raises the official client's exceptions for a refused read
        (``StreamNotFoundError`` for 404, ``RetentionGoneError`` for 410,
        ``DurableStreamError`` otherwise), ``SseUnavailableError`` when the
        answer is not SSE, and ``OSError`` or ``TimeoutError`` when the
        connection can't be made or stays silent past the quiet timeout.
        """
        parts = urlsplit(self.url)
        secure = parts.scheme == "https"
        host = parts.hostname or "localhost"
        port = parts.port or (443 if secure else 80)
        context = (self._ssl_context or shared_ssl_context()) if secure else None
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        protocol = _SseProtocol(self, done, loop)
        if self.closed():
            return
        async with asyncio.timeout(self._connect_timeout):
            transport, _ = await loop.create_connection(
                lambda: protocol,
                host,
                port,
                ssl=context,
                server_hostname=host if secure else None,
            )
        self._protocol = protocol
        try:
            if self.closed():  # close() while connecting
                return
            transport.write(self._request(parts.netloc, parts.path or "/", parts.query))
            protocol.watch_quiet(self._quiet_timeout)
            await done
        finally:
            self._protocol = None
            protocol.stop()

    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def pause(self) -> None:
        """Stop taking data from the connection (flow control); ``resume()`` goes on."""
        self.paused = True
        if self._protocol is not None:
            self._protocol.pause()

    def resume(self) -> None:
        self.paused = False
        if self._protocol is not None:
            self._protocol.resume()

    def close(self) -> None:
        """End the read: ``read()`` returns (updates already delivered stand)."""
        self._closed = True
        if self._protocol is not None:
            self._protocol.finish(None)

    def _request(self, netloc: str, path: str, query: str) -> bytes:
        params = f"offset={quote(self.offset, safe='')}&live=sse"
        target = f"{path}?{query}&{params}" if query else f"{path}?{params}"
        lines = [f"GET {target} HTTP/1.1", f"Host: {netloc}", f"Accept: {SSE}"]
        lines += [f"{name}: {value}" for name, value in self._headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _deliver(self, payloads: list[bytes], control: bytes) -> bool:
        """A control event: hand over the update; True when the stream is closed."""
        state = _decode_control(control)
        closed = bool(state.streamClosed)
        if self._json:
            messages = [m for payload in payloads for m in split_json_payload(payload)]
        else:
            data = b"".join(payloads)
            messages = [data] if data else []
        update = Update(
            messages=messages,
            content_type=self._content_type,
            next_offset=state.streamNextOffset,
            up_to_date=bool(state.upToDate) or closed,
            closed=closed,
        )
        self.offset = update.next_offset
        self.updates += 1
        self._on_update(update)
        return closed


class _SseProtocol(asyncio.Protocol):
    """The response: status and headers, then a chunked (or plain) body of SSE events."""

    def __init__(
        self, reader: SseReader, done: asyncio.Future[None], loop: asyncio.AbstractEventLoop
    ) -> None:
        self._reader = reader
        self._done = done
        self._loop = loop
        self._transport: asyncio.Transport | None = None
        self._head = bytearray()
        self._status = 0
        self._chunked = False
        self._remaining = -1  # body bytes left (Content-Length), -1 when not bounded
        self._chunk_left = 0  # bytes left of the current chunk; -1 between chunks
        self._raw = b""  # undecoded transfer bytes
        self._text = b""  # SSE bytes not yet parsed into whole events
        self._base64 = False
        self._error_body: bytearray | None = None
        self._payloads: list[bytes] = []
        self._paused = False
        self._heard = loop.time()
        self._quiet_timer: asyncio.TimerHandle | None = None

    # asyncio's side.

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self._transport = cast("asyncio.Transport", transport)
        if self._reader.paused:
            # A turn later: asyncio's own transport starts reading in a callback queued
            # before this one, which in older 3.11 releases (3.11.2, Debian 12's) undid a
            # pause made here.
            self._loop.call_soon(self._pause_if_still_paused)

    def _pause_if_still_paused(self) -> None:
        if self._reader.paused:
            self.pause()

    def data_received(self, data: bytes) -> None:
        if self._done.done():
            return
        self._heard = self._loop.time()
        try:
            if self._status == 0:
                self._head += data
                end = self._head.find(b"\r\n\r\n")
                if end < 0:
                    if len(self._head) > _HEAD_LIMIT:
                        raise ConnectionError("the response's head is too long")
                    return
                data = bytes(self._head[end + 4 :])
                self._start(bytes(self._head[:end]))
                if self._done.done():
                    return
            self._body(data)
        except Exception as exc:
            self.finish(exc)

    def eof_received(self) -> bool | None:
        return None  # close the transport; connection_lost decides

    def connection_lost(self, exc: Exception | None) -> None:
        if self._error_body is not None:
            self._refused()
        elif self._status == 0:
            self.finish(exc or ConnectionResetError("the server closed the connection"))
        else:
            # Mid-stream: what was confirmed stands, the caller reads on from ``offset``.
            self.finish(None)

    # Flow control and the end.

    def pause(self) -> None:
        if not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()

    def resume(self) -> None:
        if self._paused and self._transport is not None:
            self._paused = False
            self._heard = self._loop.time()
            self._transport.resume_reading()

    def watch_quiet(self, timeout: float) -> None:
        """Fail when nothing (not even a keep-alive) arrives for ``timeout`` seconds."""

        def check() -> None:
            silent = self._loop.time() - self._heard
            if self._done.done():
                return
            if silent >= timeout and not self._paused:
                self.finish(TimeoutError(f"no data for {silent:.0f}s"))
                return
            self._quiet_timer = self._loop.call_later(max(timeout - silent, 1.0), check)

        self._quiet_timer = self._loop.call_later(timeout, check)

    def finish(self, exc: BaseException | None) -> None:
        if not self._done.done():
            if exc is None:
                self._done.set_result(None)
            else:
                self._done.set_exception(exc)
        self.stop()

    def stop(self) -> None:
        if self._quiet_timer is not None:
            self._quiet_timer.cancel()
            self._quiet_timer = None
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()

    # The response.

    def _start(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        status_line = lines[0].split(" ", 2)
        if len(status_line) < 2 or not status_line[0].startswith("HTTP/"):
            raise ConnectionError(f"not an HTTP response: {lines[0][:100]!r}")
        self._status = int(status_line[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        length = headers.get("content-length")
        if not self._chunked and length is not None:
            self._remaining = int(length)
        answered = media_type(headers.get("content-type"))
        if self._status in _NO_SSE_STATUSES or (self._status == 200 and answered != SSE):
            self.finish(SseUnavailableError(f"HTTP {self._status}, {answered or 'no type'}"))
            return
        if self._status != 200:
            self._error_body = bytearray()
            return
        self._base64 = headers.get("stream-sse-data-encoding", "").lower() == "base64"

    def _body(self, data: bytes) -> None:
        if not self._chunked:
            if self._remaining >= 0:
                data = data[: self._remaining]
                self._remaining -= len(data)
            self._content(data)
            if self._remaining == 0:
                self._ended()
            return
        raw = self._raw + data if self._raw else data
        position = 0
        while position < len(raw):
            if self._chunk_left > 0:
                piece = raw[position : position + self._chunk_left]
                self._chunk_left -= len(piece)
                position += len(piece)
                self._content(piece)
                if self._chunk_left == 0:
                    self._chunk_left = -2  # the CRLF after the chunk
                continue
            if self._chunk_left == -2:
                if len(raw) - position < 2:
                    break
                position += 2
                self._chunk_left = 0
                continue
            end = raw.find(b"\r\n", position)
            if end < 0:
                break
            size = int(raw[position:end].split(b";", 1)[0], 16)
            position = end + 2
            if size == 0:
                self._ended()
                return
            self._chunk_left = size
        self._raw = raw[position:]

    def _content(self, data: bytes) -> None:
        if self._error_body is not None:
            self._error_body += data[: _ERROR_BODY_BYTES - len(self._error_body)]
            return
        text = self._text + data if self._text else data
        held = b""
        if b"\r" in text:
            # SSE lines may end in CR, LF or CRLF; a CR at the end may be half of a CRLF.
            if text.endswith(b"\r"):
                text, held = text[:-1], b"\r"
            text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        start = 0
        while True:
            end = text.find(b"\n\n", start)
            if end < 0:
                break
            if self._event(text[start:end]):
                return
            start = end + 2
        self._text = text[start:] + held

    def _event(self, block: bytes) -> bool:
        """One event; True when it closed the stream (the read is over)."""
        name = b"message"
        data: list[bytes] = []
        for line in block.split(b"\n"):
            if not line or line[0] == 0x3A:  # empty, or a comment (keep-alive)
                continue
            field, _, value = line.partition(b":")
            if value[:1] == b" ":
                value = value[1:]
            if field == b"event":
                name = value
            elif field == b"data":
                data.append(value)
        if not data:
            return False
        payload = data[0] if len(data) == 1 else b"\n".join(data)
        if name == b"data":
            self._payloads.append(base64.b64decode(payload) if self._base64 else payload)
            return False
        if name != b"control":
            return False
        payloads, self._payloads = self._payloads, []
        if self._reader._deliver(payloads, payload):
            self.finish(None)
            return True
        return False

    def _ended(self) -> None:
        if self._error_body is not None:
            self._refused()
        else:
            self.finish(None)

    def _refused(self) -> None:
        body = bytes(self._error_body or b"").decode("utf-8", "replace")
        self.finish(http_error(self._status, self._reader.url, body))
