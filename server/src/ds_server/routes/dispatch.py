"""The ASGI front door: stream operations served directly, everything else by Litestar.

Stream paths are ``/v1/stream/{path}`` and ``/ds/{bucket}/{stream}``. Bucket
metadata and listings, snapshots, bootstrap, subscriptions (any ``__ds``
segment), CORS preflights and health checks go to the Litestar app.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, cast

from ds_server.connection import connection_of
from ds_server.errors import describe
from ds_server.middleware import SECURITY_HEADERS
from ds_server.protocol import headers as h
from ds_server.routes import reads, streams
from ds_server.routes._http import HttpRequest, Reply
from ds_server.routes._ids import RESERVED_STREAM_ID, bucket_id, stream_name
from ds_server.routes._request import BadRequest, stream_path
from ds_server.stores.errors import StoreError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from litestar.types import ASGIApp, HTTPScope, Receive, Scope, Send

    from ds_server.connection import Connection
    from ds_server.routes._context import ServerContext

    Operation = Callable[[ServerContext, HttpRequest, str], Awaitable[Reply]]

log = logging.getLogger("ds_server")

STREAM_PREFIX = "/v1/stream/"
BUCKET_PREFIX = "/ds/"
_RESERVED_SEGMENT = "__ds"

_OPERATIONS: dict[str, Operation] = {
    "PUT": streams.create,
    "POST": streams.append,
    "GET": reads.read,
    "HEAD": streams.metadata,
    "DELETE": streams.remove,
}
_NO_LENGTH = frozenset({204, 304})


class StreamDispatcher:
    """Serve stream operations; hand every other request to ``fallback``."""

    def __init__(self, fallback: ASGIApp, ctx: ServerContext) -> None:
        self._fallback = fallback
        self._ctx = ctx
        origins = ctx.settings.http.cors_origins
        self._any_origin = "*" in origins
        self._origins = frozenset(origins)
        self._exposed = ", ".join(h.EXPOSED).encode("latin-1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # type: ignore[comparison-overlap]
            await self._fallback(scope, receive, send)
            return
        http_scope = cast("HTTPScope", scope)
        operation = _OPERATIONS.get(http_scope["method"])
        route = _route(http_scope["path"], http_scope["method"]) if operation else None
        if operation is None or route is None:
            await self._fallback(scope, receive, send)
            return
        request = HttpRequest(http_scope, receive)
        try:
            name = stream_path(route) if isinstance(route, str) else await self._in_bucket(route)
            reply = await operation(self._ctx, request, name)
        except (StoreError, BadRequest) as error:
            status, reason, extra = describe(error)
            reply = Reply(
                status,
                {**extra, h.CONTENT_TYPE: "text/plain; charset=utf-8"},
                (reason + "\n").encode("utf-8"),
            )
        except Exception:
            log.exception("unhandled error on %s %s", http_scope["method"], http_scope["path"])
            reply = Reply(500, {h.CONTENT_TYPE: "text/plain; charset=utf-8"}, b"internal error\n")
        # Sent here rather than in a helper coroutine: one less per request.
        headers = self._response_headers(request, reply)
        if reply.stream is None and reply.status not in _NO_LENGTH:
            headers.append((b"content-length", str(len(reply.body)).encode()))
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        if reply.stream is None:
            await send({"type": "http.response.body", "body": reply.body, "more_body": False})
        else:
            # A live read lasts minutes: don't hold the parsed request and the
            # response head meanwhile (~2 KiB per idle SSE connection).
            del request, headers
            await _stream_until_disconnect(reply, http_scope, receive, send)

    async def _in_bucket(self, route: tuple[str, str]) -> str:
        bucket, stream = route
        name = stream_name(bucket_id(bucket), stream)
        await self._ctx.store.get_bucket(bucket)  # 404 when the bucket is missing
        return name

    def _response_headers(self, request: HttpRequest, reply: Reply) -> list[tuple[bytes, bytes]]:
        headers = [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in reply.headers.items()
        ]
        headers.extend(SECURITY_HEADERS)
        origin = request.headers.get("origin")
        if origin is not None and (self._any_origin or origin in self._origins):
            allowed = b"*" if self._any_origin else origin.encode("latin-1")
            headers.append((b"access-control-allow-origin", allowed))
            headers.append((b"access-control-expose-headers", self._exposed))
            if not self._any_origin:
                headers.append((b"vary", b"Origin"))
        return headers


def _route(path: str, method: str) -> tuple[str, str] | str | None:
    """A /v1/stream path, a (bucket, stream) pair, or None for Litestar's routes."""
    if path.startswith(STREAM_PREFIX):
        rest = path[len(STREAM_PREFIX) :]
        if _RESERVED_SEGMENT in rest.split("/"):
            return None  # subscriptions and the reserved-path guard live in Litestar
        return rest
    if path.startswith(BUCKET_PREFIX):
        parts = path[len(BUCKET_PREFIX) :].split("/")
        if len(parts) != 2 or (parts[1] == RESERVED_STREAM_ID and method == "GET"):
            return None  # bucket metadata, listing, snapshots, bootstrap
        return parts[0], parts[1]
    return None


async def _stream_until_disconnect(
    reply: Reply, scope: HTTPScope, receive: Receive, send: Send
) -> None:
    """Send the body stream until it ends or the client goes away, whichever is first."""
    stream = reply.stream
    assert stream is not None
    connection = connection_of(scope)
    slot = reply.send_slot
    if slot is not None:
        slot.send = send
        slot.connection = connection
        if connection is not None:
            # The body ends itself when the client goes (see SendSlot): pumped
            # in this task, with no watcher, ~2 KiB less per live connection.
            try:
                await _pump(stream, send, connection)
            except Exception:
                log.exception("stream response failed")
            finally:
                await _close(stream)
            return

    pumping = asyncio.ensure_future(_pump(stream, send, connection))
    watching = asyncio.ensure_future(_watch(receive))
    try:
        await asyncio.wait({pumping, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (pumping, watching):
            task.cancel()
        try:
            # Both have ended when this returns; a failed pump is logged below.
            # (Not `with suppress(...): await task` per task: compiled with
            # mypyc, that let the swallowed CancelledError escape.)
            await asyncio.gather(pumping, watching, return_exceptions=True)
        finally:
            await _close(stream)
    if pumping.done() and not pumping.cancelled() and pumping.exception() is not None:
        log.error("stream response failed", exc_info=pumping.exception())


async def _pump(stream: AsyncIterator[bytes], send: Send, connection: Connection | None) -> None:
    async for chunk in stream:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if connection is not None and connection.lost:
            # Sends to a lost connection return at once; without this a
            # reader far behind would be read and framed to its end for nobody.
            return
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _watch(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _close(stream: AsyncIterator[bytes]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()
