"""``GET /metrics`` on a listener of its own (``DS_METRICS__HOST``/``PORT``, loopback).

Not a route of the app: Envoy forwards the app's paths, so a ``/metrics``
route would be public through the gateway; a separate socket never is.
Served on the event loop, a scrape sees the store between two operations
(see ``stored``). One request per connection, as scrapers send.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from ds_server.metrics.families import REGISTRY

if TYPE_CHECKING:
    import socket

_MAX_HEAD = 8192
_HEAD_TIMEOUT_SECS = 5.0


async def serve_metrics(sock: socket.socket) -> asyncio.Server:
    """Serve ``/metrics`` on the bound ``sock``; the caller closes the returned server."""
    return await asyncio.start_server(_answer, sock=sock, limit=_MAX_HEAD)


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, ValueError, asyncio.IncompleteReadError, TimeoutError):
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT_SECS)
        method, _, rest = head.partition(b" ")
        path = rest.split(b" ", 1)[0].split(b"?", 1)[0]
        body, kind = b"", "text/plain; charset=utf-8"
        if path != b"/metrics":
            status = "404 Not Found"
        elif method not in (b"GET", b"HEAD"):
            status = "405 Method Not Allowed"
        else:
            status, kind = "200 OK", CONTENT_TYPE_LATEST
            body = generate_latest(REGISTRY)
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n".encode()
            + (body if method != b"HEAD" else b"")
        )
        await writer.drain()
    writer.close()
