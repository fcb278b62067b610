"""A small HTTP/1.1 client for request/response calls on kept-alive connections.

httpx spends about 0.6 ms of CPU per request here (its request and
response models, httpcore, h11, anyio); a plain asyncio stream spends about
30 µs. A service that makes hundreds of small requests a second (ds-sync's
idempotent-producer POSTs, its subscription claims and acks) uses this
instead. It does what those calls need and nothing more: HTTP/1.1 with
keep-alive, bodies by ``Content-Length`` or chunked, TLS; no redirects,
cookies, proxies, compression or HTTP/2.

A connection that the server closed while it sat idle fails on its next
use before any answer arrives; such a request is sent once more on a new
connection (the server never saw it). Any other failure is raised as
``OSError`` or ``TimeoutError`` and the connection is dropped.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from durable_sessions._http import shared_ssl_context

if TYPE_CHECKING:
    import ssl
    from collections.abc import Mapping

__all__ = ["Http1Client", "Response"]

_NO_BODY_STATUSES = frozenset({204, 304})
_HEAD_LIMIT = 64 * 1024


@dataclass(frozen=True, slots=True)
class Response:
    """A whole response: status, headers (names in lower case) and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def status_code(self) -> int:
        """The status, under httpx's name."""
        return self.status

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    @property
    def content(self) -> bytes:
        """The body, under httpx's name."""
        return self.body


@dataclass(slots=True)
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    def usable(self) -> bool:
        return not self.writer.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        self.writer.close()


class Http1Client:
    """Requests to any origin, over a few kept-alive connections per origin."""

    def __init__(
        self,
        *,
        timeout_secs: float = 30.0,
        max_idle_per_origin: int = 8,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._timeout = timeout_secs
        self._max_idle = max_idle_per_origin
        self._ssl_context = ssl_context
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes = b"",
    ) -> Response:
        """Send one request and read its whole answer."""
        parts = urlsplit(url)
        secure = parts.scheme == "https"
        port = parts.port or (443 if secure else 80)
        origin = (parts.scheme, parts.hostname or "localhost", port)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"{method} {target} HTTP/1.1", f"Host: {parts.netloc}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if content or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(content)}")
        message = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + content
        async with asyncio.timeout(self._timeout):
            while True:
                connection, reused = await self._connection(origin)
                try:
                    response, keep = await _exchange(connection, message, method)
                except _NotAnswered:
                    connection.close()
                    if reused:
                        continue  # closed by the server while idle: it never saw this request
                    raise ConnectionResetError("the server closed the connection") from None
                except BaseException:
                    connection.close()
                    raise
                if keep:
                    self._release(origin, connection)
                else:
                    connection.close()
                return response

    async def aclose(self) -> None:
        """Close every idle connection."""
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    async def _connection(self, origin: tuple[str, str, int]) -> tuple[_Connection, bool]:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if connection.usable():
                return connection, True
            connection.close()
        scheme, host, port = origin
        context = None
        if scheme == "https":
            context = self._ssl_context or shared_ssl_context()
        reader, writer = await asyncio.open_connection(
            host, port, ssl=context, server_hostname=host if context else None, limit=_HEAD_LIMIT
        )
        return _Connection(reader, writer), False

    def _release(self, origin: tuple[str, str, int], connection: _Connection) -> None:
        idle = self._idle.setdefault(origin, [])
        if len(idle) < self._max_idle and connection.usable():
            idle.append(connection)
        else:
            connection.close()


class _NotAnswered(Exception):
    """The connection ended before a single byte of the answer."""


async def _exchange(connection: _Connection, message: bytes, method: str) -> tuple[Response, bool]:
    """Write the request, read the answer; and whether the connection may be used again."""
    reader, writer = connection.reader, connection.writer
    try:
        writer.write(message)
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise _NotAnswered() from None
        raise ConnectionResetError("the answer was cut short") from None
    except (ConnectionResetError, BrokenPipeError):
        raise _NotAnswered() from None
    except asyncio.LimitOverrunError:
        raise ConnectionError("the answer's head is too long") from None
    lines = head[:-4].decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    status = int(rest[:3])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
    try:
        if method == "HEAD" or status in _NO_BODY_STATUSES or status < 200:
            body = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            body = await _chunked(reader)
        elif "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        else:
            body, keep = await reader.read(), False
    except asyncio.IncompleteReadError:
        raise ConnectionResetError("the answer's body was cut short") from None
    return Response(status, headers, body), keep


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append((await reader.readexactly(size + 2))[:-2])
