"""``/metrics`` (Prometheus text) and ``/healthz`` on a small asyncio HTTP server.

Two read-only GETs need no web framework: this answers one request per
connection and closes it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

_MAX_REQUEST_LINE = 8192


async def serve(
    host: str, port: int, metrics_text: Callable[[], str], healthy: Callable[[], bool]
) -> asyncio.Server:
    """Start serving; the caller closes the returned server."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, ValueError, asyncio.IncompleteReadError):
            request = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
            method, _, rest = request[:_MAX_REQUEST_LINE].partition(b" ")
            path = rest.split(b" ", 1)[0].split(b"?", 1)[0]
            if method != b"GET":
                status, body, kind = "405 Method Not Allowed", b"", "text/plain"
            elif path == b"/metrics":
                status, kind = "200 OK", "text/plain; version=0.0.4"
                body = metrics_text().encode()
            elif path == b"/healthz":
                ok = healthy()
                status = "200 OK" if ok else "503 Service Unavailable"
                body, kind = (b"ok" if ok else b"starting"), "text/plain"
            else:
                status, body, kind = "404 Not Found", b"", "text/plain"
            head = (
                f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode() + body)
            await writer.drain()
        writer.close()

    try:
        return await asyncio.start_server(answer, host, port)
    except OSError as exc:
        raise EndpointError(
            f"cannot listen on {host}:{port} for /metrics and /healthz: {exc}"
        ) from exc


class EndpointError(RuntimeError):
    """The metrics endpoint's address is taken or not ours (DS_SYNC__METRICS_HOST/PORT)."""
