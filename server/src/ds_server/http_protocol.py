"""uvicorn's httptools protocol with less Python per request.

A request through uvicorn's HTTP layer cost ~107,000 instructions before
the application ran at all; uvloop and httptools alone need ~7,000. The
rest is Python run for every request: a scope built key by key, a cycle
object built from eleven keyword arguments, an ``asyncio.Event``, two
regular expressions per response header, and a keep-alive timer created
and cancelled per request. Appends cost ds-server about as much again, so
that layer was half of every request's CPU.

This subclass keeps uvicorn's behaviour (the same ASGI scope and messages,
flow control, pipelining, keep-alive timeout, 500 on application errors)
and does the same work with less: scope from a per-connection template,
header checks once per response, one keep-alive timer per idle spell
rather than per request, one task per connection rather than per request,
and the response head built by ``ds_server.response_head``, which the
compiled build compiles (this module can't be: its classes derive from
uvicorn's, and compiled so they were slower).
uvicorn is pinned to the minor version this was written against in
``server/pyproject.toml``; ``server/tests/http/test_uvicorn_internals.py``
fails as soon as the uvicorn internals overridden here change, and
``test_http_protocol.py`` holds this to uvicorn's behaviour byte for byte.

Where uvicorn has no limits, this adds three (``ConnectionLimits``), so a
client can't hold a connection without using it: a request head must
arrive within a deadline (uvicorn waits forever, even for a connection
that never sends a byte) and within a size (uvicorn takes any), and a
client that takes none of its response for a while is disconnected. Each
request's scope also carries the connection's state (``ds_server.connection``),
so a writer serving many clients can skip one that would make it wait.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast
from urllib.parse import unquote

import httptools
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT, service_unavailable
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from ds_server.connection import CONNECTION
from ds_server.connection_signals import LeanFlowControl, Signal
from ds_server.response_head import response_head
from ds_server.stalled_writes import StallWatch

if TYPE_CHECKING:
    import asyncio
    from collections import deque
    from collections.abc import Callable

    from uvicorn._types import ASGI3Application, ASGISendEvent, HTTPScope

# A request head larger than this is refused with 431 (Envoy's default
# limit is 60 KiB, Node's 16 KiB); what an unfinished head holds is
# bounded by this plus one read.
MAX_HEAD_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """How long a client may take to send a request head, and to take its response."""

    request_head_secs: float = 10.0
    stalled_reader_secs: float = 30.0


class LeanHttpToolsProtocol(HttpToolsProtocol):
    """Pass as ``uvicorn.Config(http=LeanHttpToolsProtocol.with_limits(...))``."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    _scope_template: dict[str, Any]
    _idle_since: float | None = None
    # Since when a request head is awaited (from the connection's start or a
    # request's first byte), and how many bytes of it have arrived in reads
    # after the one it started in (-1: none yet).
    _head_since: float | None = None
    _head_bytes = 0
    _head_started = False
    _stall_watch: StallWatch | None = None
    _lost_callback: Callable[[], None] | None = None
    _ready: deque[tuple[RequestResponseCycle, ASGI3Application]]
    _worker: asyncio.Task[None] | None = None
    _waiting: asyncio.Future[None] | None = None
    _lost = False

    @classmethod
    def with_limits(cls, limits: ConnectionLimits) -> type[LeanHttpToolsProtocol]:
        """The protocol class to give uvicorn, with these limits."""
        configured: type[LeanHttpToolsProtocol] = type(cls.__name__, (cls,), {"limits": limits})
        return configured

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.flow = LeanFlowControl(transport)
        # uvicorn's own queue of pipelined requests, which this class replaces.
        self._ready = self.pipeline
        # The parts of the scope that are the same for every request on this connection.
        self._scope_template = {
            "type": "http",
            "asgi": {"version": self.asgi_version, "spec_version": "2.3"},
            "http_version": "1.1",
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,
            "root_path": self.root_path,
            "extensions": {CONNECTION: self},
        }
        # A new connection must send its first request head in time, as any
        # other. The handler re-arms for whatever is due next, so firing early
        # is harmless, and by the keep-alive timeout it also serves the first
        # idle spell.
        self._head_since = self.loop.time()
        self.timeout_keep_alive_task = self.loop.call_later(
            min(self.limits.request_head_secs, self.timeout_keep_alive),
            self.timeout_keep_alive_handler,
        )

    # ds_server.connection.Connection
    @property
    def write_blocked(self) -> bool:
        return self.flow.write_paused

    @property
    def lost(self) -> bool:
        return self.transport.is_closing()

    def on_lost(self, callback: Callable[[], None] | None) -> None:
        if callback is not None and self._lost:
            callback()
            return
        self._lost_callback = callback

    def on_message_begin(self) -> None:
        self.url = b""
        self.expect_100_continue = False
        self.headers = []
        scope = self._scope_template.copy()
        scope["headers"] = self.headers
        scope["state"] = self.app_state.copy()
        self.scope = cast("HTTPScope", scope)
        if self._head_since is None:
            self._head_since = self.loop.time()
        self._head_bytes = -1
        self._head_started = True

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect_100_continue = True
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self._head_since = None
        self._head_started = False
        parser = self.parser
        scope = self.scope
        http_version = parser.get_http_version()
        scope["method"] = parser.get_method().decode("ascii")
        if http_version != "1.1":
            scope["http_version"] = http_version
        if parser.should_upgrade() and self._should_upgrade():
            return
        parsed_url = httptools.parse_url(self.url)
        raw_path = parsed_url.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = unquote(path)
        if self.root_path:
            scope["path"] = self.root_path + path
            scope["raw_path"] = self.root_path.encode("ascii") + raw_path
        else:
            scope["path"] = path
            scope["raw_path"] = raw_path
        scope["query_string"] = parsed_url.query or b""

        app = self.app
        limit = self.limit_concurrency
        if limit is not None and (len(self.connections) >= limit or len(self.tasks) >= limit):
            app = service_unavailable
            self.logger.warning("Exceeded concurrency limit.")

        existing = self.cycle
        self.cycle = LeanCycle(self, scope, http_version != "1.0" and parser.should_keep_alive())
        if existing is not None and not existing.response_complete:
            # Pipelined: it waits its turn in the connection's queue, and
            # reading stops meanwhile, as in uvicorn.
            self.flow.pause_reading()
        self._start_asgi_task(self.cycle, app)

    def on_body(self, body: bytes) -> None:
        cycle = self.cycle
        if cycle.response_complete or (self.parser.should_upgrade() and self._should_upgrade()):
            return
        # Most bodies arrive whole: keep the parser's bytes rather than copy
        # them into a bytearray and back (uvicorn's receive() hands the body
        # on as bytes(body), which is the same object for bytes).
        if cycle.body:
            cycle.body += body
        else:
            cycle.body = body  # type: ignore[assignment]
        if len(cycle.body) > HIGH_WATER_LIMIT:
            self.flow.pause_reading()
        cycle.message_event.set()

    # One task per connection serves its requests in turn, where uvicorn
    # creates a task per request (~17,000 instructions: the task, its entry
    # in asyncio's registry of tasks, a done callback). Requests on one
    # connection never overlap: pipelined ones wait in the same queue (which
    # replaces uvicorn's pipeline), so the order is the same. One difference:
    # uvicorn gives each request a fresh copy of the context variables; here
    # the requests of a connection share one. Serving a request sets no
    # context variable (test_uvicorn_internals.py), so nothing can tell; a
    # per-request hook must keep per-request values in the scope instead.
    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        self._ready.append((cycle, app))
        if self._worker is None:
            self._worker = worker = self.loop.create_task(self._serve())
            worker.add_done_callback(self.tasks.discard)
            self.tasks.add(worker)
        elif self._waiting is not None:
            self._waiting.set_result(None)
            self._waiting = None

    async def _serve(self) -> None:
        ready = self._ready
        worker = self._worker
        assert worker is not None
        while True:
            while ready:
                cycle, app = ready.popleft()
                await cycle.run_asgi(app)  # answers 500 or closes on errors, as in uvicorn
                if worker.cancelling():
                    return  # cancelled at shutdown: run_asgi has already closed the connection
            if self._lost:
                return
            self._waiting = self.loop.create_future()
            await self._waiting

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._lost = True
        if self._stall_watch is not None:
            self._stall_watch.resumed()
        callback, self._lost_callback = self._lost_callback, None
        if callback is not None:
            callback()
        if self._waiting is not None:
            self._waiting.set_result(None)
            self._waiting = None

    # Keep-alive: uvicorn arms a timer when a response completes and cancels
    # it when data arrives, a timer created and cancelled per request. Here
    # one timer serves a whole idle spell: when it fires it closes the
    # connection only if it has been idle for the full timeout, and otherwise
    # re-arms for the rest.
    def data_received(self, data: bytes) -> None:
        self._idle_since = None
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            msg = "Invalid HTTP request received."
            self.logger.warning(msg)
            self.send_400_response(msg)
            return
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        if self._head_since is not None:
            # A head is still incomplete. Of the read it began in only part
            # may be its own; every later read is all head.
            if self._head_bytes < 0:
                self._head_bytes = 0
            else:
                self._head_bytes += len(data)
                if self._head_bytes > MAX_HEAD_BYTES:
                    self._refuse_head(431, b"Request Header Fields Too Large")

    def on_response_complete(self) -> None:
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        if self._ready:
            return  # a pipelined request runs next: the connection isn't idle
        self._idle_since = self.loop.time()
        if self.timeout_keep_alive_task is None:
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

    # The same timer watches request heads: one that starts arriving while
    # the timer is armed gets until ``request_head_secs`` after its first
    # byte (or after the connection opened) to be complete.
    def timeout_keep_alive_handler(self) -> None:
        self.timeout_keep_alive_task = None
        if self.transport.is_closing():
            return
        if self._head_since is not None:
            since, limit = self._head_since, self.limits.request_head_secs
        elif self._idle_since is not None:
            since, limit = self._idle_since, self.timeout_keep_alive
        else:
            return  # busy: the next completed response arms a new timer
        remaining = since + limit - self.loop.time()
        if remaining > 0:
            self.timeout_keep_alive_task = self.loop.call_later(
                remaining, self.timeout_keep_alive_handler
            )
        elif self._head_started:
            self._refuse_head(408, b"Request Timeout")
        else:
            self.transport.close()

    def _refuse_head(self, status: int, reason: bytes) -> None:
        """Answer a request whose head is too slow or too big, and close."""
        self._head_since = None
        self.flow.pause_reading()
        if self.cycle is None or self.cycle.response_complete:
            self.transport.write(
                b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"connection: close\r\ncontent-length: %d\r\n\r\n%s\n"
                % (status, reason, len(reason) + 1, reason)
            )
        # Otherwise a response is under way: a status can't be slipped into it.
        self.transport.close()

    # Flow control: uvicorn pauses responses while the client isn't reading;
    # a client that takes nothing for ``stalled_reader_secs`` is disconnected.
    def pause_writing(self) -> None:
        super().pause_writing()
        watch = self._stall_watch
        if watch is None:
            watch = self._stall_watch = StallWatch(
                self.loop, self.transport, self.limits.stalled_reader_secs
            )
        watch.paused()

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stall_watch is not None:
            self._stall_watch.resumed()


class LeanCycle(RequestResponseCycle):
    """One request and its response; uvicorn's cycle, built and sent with less."""

    def __init__(self, protocol: LeanHttpToolsProtocol, scope: HTTPScope, keep_alive: bool) -> None:
        # The attributes uvicorn's cycle has; its protocol and server read them.
        self.scope = scope
        self.transport = protocol.transport
        self.flow = protocol.flow
        self.logger = protocol.logger
        self.access_logger = protocol.access_logger
        self.access_log = protocol.access_log
        self.default_headers = protocol.server_state.default_headers
        self.message_event = Signal()  # type: ignore[assignment]
        self.on_response = protocol.on_response_complete
        self.disconnected = False
        self.keep_alive = keep_alive
        self.waiting_for_100_continue = protocol.expect_100_continue
        self.body = bytearray()
        self.more_body = True
        self.response_started = False
        self.response_complete = False
        self.chunked_encoding = None
        self.expected_content_length = 0

    async def send(self, message: ASGISendEvent) -> None:
        if self.access_log:
            await super().send(message)
            return
        if self.flow.write_paused and not self.disconnected:
            await self.flow.drain()
        if self.disconnected:
            return
        if not self.response_started:
            self._start(message)
        elif not self.response_complete:
            self._body(message)
        else:
            kind = message["type"]
            raise RuntimeError(
                f"Unexpected ASGI message '{kind}' sent, after response already completed."
            )

    def _start(self, message: ASGISendEvent) -> None:
        if message["type"] != "http.response.start":
            raise RuntimeError(
                f"Expected ASGI message 'http.response.start', but got '{message['type']}'."
            )
        self.response_started = True
        self.waiting_for_100_continue = False
        head = response_head(
            message["status"],
            [*self.default_headers, *message.get("headers", ())],
            keep_alive=self.keep_alive,
            head_request=self.scope["method"] == "HEAD",
        )
        self.keep_alive = head.keep_alive
        self.chunked_encoding = head.chunked
        self.expected_content_length = head.content_length
        self.transport.write(head.data)

    # uvicorn's body branch of send, as a plain method: handing body messages
    # back to super().send costs a coroutine per message, ~2,300 instructions
    # per append. test_http_protocol.py holds both to the same bytes.
    def _body(self, message: ASGISendEvent) -> None:
        if message["type"] != "http.response.body":
            raise RuntimeError(
                f"Expected ASGI message 'http.response.body', but got '{message['type']}'."
            )
        body = message.get("body", b"")
        more_body = message.get("more_body", False)
        if self.scope["method"] == "HEAD":
            self.expected_content_length = 0
        elif self.chunked_encoding:
            content = [b"%x\r\n" % len(body), body, b"\r\n"] if body else []
            if not more_body:
                content.append(b"0\r\n\r\n")
            if content:
                self.transport.write(b"".join(content))
        else:
            if len(body) > self.expected_content_length:
                raise RuntimeError("Response content longer than Content-Length")
            self.expected_content_length -= len(body)
            if body:
                self.transport.write(body)
        if not more_body:
            if self.expected_content_length != 0:
                raise RuntimeError("Response content shorter than Content-Length")
            self.response_complete = True
            self.message_event.set()
            if not self.keep_alive:
                self.transport.close()
            self.on_response()
