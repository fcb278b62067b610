"""The one ASGI layer in front of every request.

In this order, for every HTTP request: the per-request hooks are told it
started; a guard (gateway authorization, when enabled) may refuse it (and
is told when it ends, whatever became of it); a
CORS preflight is answered; a stream operation (``Handler``: the
dispatcher of ``routes/dispatch.py``) is served straight on ASGI;
anything else goes to the app (Litestar). Every response, whoever made it,
gets its security and CORS headers here (``cors.Cors``) and is reported to
the hooks, which is where logging and metrics hook in.

Hooks keep per-request values in the ASGI scope, never in context
variables: the HTTP protocol serves a connection's requests in one task
(see ``http_protocol.py``). The edge reads the clock once per request and
hands that reading and the response's status to every hook, so a hook
that only needs them when the request ends (the request log) costs one
call per request, not three.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from time import perf_counter
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from ds_server.connection import connection_of
from ds_server.edge.http import HttpRequest

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence

    from litestar.types import (
        ASGIApp,
        HTTPResponseStartEvent,
        HTTPScope,
        Message,
        Receive,
        Scope,
        Send,
    )

    from ds_server.connection import Connection
    from ds_server.edge.cors import Cors
    from ds_server.edge.http import Reply

log = logging.getLogger("ds_server")

_NO_LENGTH = frozenset({204, 304})
RouteT = TypeVar("RouteT")


class Handler(Protocol[RouteT]):
    """Requests served on ASGI directly, before the app: the stream operations."""

    def route(self, scope: HTTPScope) -> RouteT | None:
        """What ``serve`` needs to serve this request, or None to leave it to the app."""

    async def serve(self, route: RouteT, request: HttpRequest) -> Reply:
        """The reply, errors included (never raises)."""


class Guard(Protocol):
    """Decides, before anything is served, whether a request may be."""

    def check(self, scope: HTTPScope) -> Reply | None:
        """None to let the request through (the scope may be amended), else the refusal."""

    def finished(self, scope: HTTPScope) -> None:
        """The request has ended, however it ended (what ``check`` holds for it is let go)."""


class RequestHook(Protocol):
    """Told when every HTTP request ends: for logging and metrics.

    ``started`` is the edge's clock (``time.perf_counter``) when the request
    reached it, ``status`` the response's (0: none was sent).
    """

    def request_finished(self, scope: HTTPScope, started: float, status: int) -> None:
        """The response is complete, or the request ended without one."""


class OpenRequestHook(Protocol):
    """A ``RequestHook`` also told when each request starts and when its response starts.

    For what must be known while a request is still open: the live reads
    open now, the time to the response's head. (Not derived from
    ``RequestHook``, nor checkable with ``isinstance``: mypyc compiles
    neither; the edge tells them apart by ``request_started``.)
    """

    def request_finished(self, scope: HTTPScope, started: float, status: int) -> None: ...

    def request_started(self, scope: HTTPScope, started: float) -> None: ...

    def response_started(self, scope: HTTPScope, started: float, status: int) -> None: ...


class Edge:
    """The ASGI application the server runs: the layer above, around ``handler`` and ``app``."""

    def __init__(
        self,
        app: ASGIApp,
        handler: Handler[Any],
        cors: Cors,
        *,
        guard: Guard | None = None,
        hooks: Sequence[RequestHook] = (),
    ) -> None:
        self._app = app
        self._handler = handler
        self._cors = cors
        self._guard = guard
        # Each hook's methods, bound once: a request calls them from these.
        opened = [
            cast("OpenRequestHook", hook) for hook in hooks if hasattr(hook, "request_started")
        ]
        self._on_started = tuple(hook.request_started for hook in opened)
        self._on_answered = tuple(hook.response_started for hook in opened)
        self._on_finished = tuple(hook.request_finished for hook in hooks)
        # An attribute, not the module's global: compiled, one look-up less per call.
        self._clock: Callable[[], float] = perf_counter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind: str = scope["type"]
        if kind != "http":
            if kind == "websocket":
                # No WebSocket surface; closing before accept answers 403.
                await send({"type": "websocket.close", "code": 1008, "reason": ""})
                return
            await self._app(scope, receive, send)  # lifespan
            return
        http_scope = cast("HTTPScope", scope)
        started = self._clock()
        for on_started in self._on_started:
            on_started(http_scope, started)
        status = 0  # until a response starts
        try:
            reply: Reply | None = None
            origin: str | None = None
            if self._guard is not None:
                reply = self._guard.check(http_scope)
                if reply is not None:
                    origin = _origin(http_scope)
            if reply is None:
                route = self._handler.route(http_scope)
                if route is not None:
                    request = HttpRequest(http_scope, receive)
                    reply = await self._handler.serve(route, request)
                    origin = request.headers.get("origin")
                    # A live read lasts minutes: don't hold the parsed request meanwhile.
                    del request
            if reply is not None:
                headers = self._reply_headers(reply, origin)
                status = reply.status
                for answered in self._on_answered:
                    answered(http_scope, started, status)
                start: HTTPResponseStartEvent = {
                    "type": "http.response.start",
                    "status": status,
                    "headers": headers,
                }
                # A live read lasts minutes: hold neither the head nor the parsed request.
                del headers
                await send(start)
                del start
                if reply.stream is None:
                    await send(
                        {"type": "http.response.body", "body": reply.body, "more_body": False}
                    )
                else:
                    await _stream_until_disconnect(reply, http_scope, receive, send)
                return
            origin = _origin(http_scope)
            if origin is not None and http_scope["method"] == "OPTIONS":
                preflight_status, preflight_headers = self._preflight(http_scope, origin)
                status = preflight_status
                for answered in self._on_answered:
                    answered(http_scope, started, status)
                await send(
                    {"type": "http.response.start", "status": status, "headers": preflight_headers}
                )
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            answer = _Answer()
            try:
                await self._app(
                    scope, receive, self._headed(send, http_scope, origin, started, answer)
                )
            finally:
                # (Not an optional ``answer`` read in the outer ``finally``:
                # compiled, that one came back None after an early return.)
                status = answer.status
        finally:
            if self._guard is not None:
                self._guard.finished(http_scope)
            for finished in self._on_finished:
                finished(http_scope, started, status)

    def _headed(
        self, send: Send, scope: HTTPScope, origin: str | None, started: float, answer: _Answer
    ) -> Send:
        """``send`` with this layer's headers added to the response start."""
        cors, on_answered = self._cors, self._on_answered

        async def send_headed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                cors.add_headers(headers, origin)
                message["headers"] = headers
                status: int = message["status"]
                answer.status = status
                for answered in on_answered:
                    answered(scope, started, status)
            await send(message)

        return send_headed

    def _preflight(self, scope: HTTPScope, origin: str) -> tuple[int, list[tuple[bytes, bytes]]]:
        requested = None
        for name, value in scope["headers"]:
            if name == b"access-control-request-headers":
                requested = value.decode("latin-1")
        return self._cors.preflight(origin, requested)

    def _reply_headers(self, reply: Reply, origin: str | None) -> list[tuple[bytes, bytes]]:
        headers = [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in reply.headers.items()
        ]
        self._cors.add_headers(headers, origin)
        if reply.stream is None and reply.status not in _NO_LENGTH:
            headers.append((b"content-length", str(len(reply.body)).encode()))
        return headers


class _Answer:
    """The status of a response the app sent (0 until it starts one)."""

    __slots__ = ("status",)

    def __init__(self) -> None:
        self.status = 0


def _origin(scope: HTTPScope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"origin":
            return value.decode("latin-1")
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
