"""Requests and replies straight on ASGI: the request view, the one body reader, the reply.

Appends and reads are nearly all of the traffic; serving them without a
framework's per-request machinery (routing tables, request objects,
response classes, middleware stacks) is what lets one Python process keep
up with the Node reference server. Litestar's handlers read bodies with
the same reader (``read_body``), so one set of limits applies everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ds_server.protocol.errors import BadRequest
from ds_server.stores.errors import PayloadTooLarge

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from litestar import Request
    from litestar.types import HTTPScope, Receive, Send

    from ds_server.connection import Connection


def check_declared_length(declared: str | None, limit: int) -> None:
    """400 for a malformed Content-Length, 413 for one over ``limit``, before reading."""
    if declared is None:
        return
    if not declared.isascii() or not declared.isdigit():
        raise BadRequest("malformed Content-Length")
    # Bounded length first: int() refuses strings of thousands of digits.
    if len(declared) > 18 or int(declared) > limit:
        raise PayloadTooLarge(f"body exceeds {limit} bytes")


class HttpRequest:
    """What the stream operations read from a request: method, headers, query, body.

    ``headers`` is keyed by lower-cased name, as ``protocol.headers`` spells them.
    """

    __slots__ = ("_receive", "headers", "method", "query_string", "scope")

    def __init__(self, scope: HTTPScope, receive: Receive) -> None:
        self.scope = scope
        self.method: str = scope["method"]
        self.query_string: bytes = scope["query_string"]
        self._receive = receive
        # Built back to front so the first copy of a repeated header wins, as
        # with most frameworks' get().
        self.headers: dict[str, str] = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in reversed(list(scope["headers"]))
        }

    async def body(self, limit: int) -> bytes:
        """The whole body; 413 as soon as it is known to exceed ``limit`` bytes.

        Never buffers more than ``limit``. A body cut short by the client
        leaving is refused (400), never handed on in part.
        """
        check_declared_length(self.headers.get("content-length"), limit)
        parts: list[bytes] = []
        size = 0
        while True:
            message = await self._receive()
            if message["type"] != "http.request":
                raise BadRequest("the client left before its body was complete")
            part = message.get("body", b"")
            if part:
                size += len(part)
                if size > limit:
                    raise PayloadTooLarge(f"body exceeds {limit} bytes")
                parts.append(part)
            if not message.get("more_body", False):
                break
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def url(self) -> str:
        """The absolute URL of the request (without query), percent-encoded as sent."""
        return absolute_url(self.scope, self.headers.get("host"))


async def read_body(request: Request[Any, Any, Any], limit: int) -> bytes:
    """A Litestar request's body, read as the stream operations read theirs."""
    return await HttpRequest(request.scope, request.receive).body(limit)


def absolute_url(scope: HTTPScope, host: str | None) -> str:
    """The absolute URL of a request (without query), percent-encoded as the client sent it.

    The scheme is the client's: behind a gateway that ends TLS, its
    ``X-Forwarded-Proto`` (Envoy sets it from the client's connection).
    """
    raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
    raw_path = raw_path.split(b"?", 1)[0]  # some servers leave the query on raw_path
    path = quote(raw_path.decode("latin-1"), safe="/%:@!$&'()*+,;=-._~")
    if host is None:
        server = scope.get("server") or ("localhost", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{_scheme(scope)}://{host}{path}"


def _scheme(scope: HTTPScope) -> str:
    for name, value in scope["headers"]:
        if name == b"x-forwarded-proto" and value in (b"https", b"http"):
            return value.decode("ascii")
    return scope.get("scheme", "http")


class SendSlot:
    """Where the edge leaves the ASGI ``send`` of a streamed reply, and its connection.

    An SSE body hands them to the stream's fan-out group, which then writes
    to this client directly while the body itself sleeps, as long as the
    connection takes each write at once. A body given a connection here
    ends by itself once the connection is lost, so the edge needs no task
    of its own to watch for the client leaving.
    """

    __slots__ = ("connection", "send")

    def __init__(self) -> None:
        self.send: Send | None = None
        self.connection: Connection | None = None


class Reply:
    """A response: status, headers, and a body that is bytes or an async stream of chunks."""

    # A plain class for speed, as stores.base.AppendRequest is.
    __slots__ = ("body", "headers", "send_slot", "status", "stream")

    def __init__(
        self,
        status: int,
        headers: dict[str, str] | None = None,
        body: bytes = b"",
        stream: AsyncIterator[bytes] | None = None,
        send_slot: SendSlot | None = None,
    ) -> None:
        self.status = status
        self.headers = {} if headers is None else headers
        self.body = body
        self.stream = stream
        self.send_slot = send_slot
