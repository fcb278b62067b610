"""The stream operations of both surfaces, served by the edge straight on ASGI.

``/v1/stream/{path}`` and ``/ds/{bucket}/{stream}`` (as ``edge.surfaces``
matches them) with PUT, POST, GET, HEAD or DELETE; every other request goes
to the Litestar app.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ds_server.edge.errors import describe
from ds_server.edge.http import Reply
from ds_server.edge.surfaces import stream_route
from ds_server.protocol import headers as h
from ds_server.protocol.errors import BadRequest
from ds_server.protocol.names import stream_path
from ds_server.routes import reads, streams
from ds_server.routes.bucket_streams import bucket_stream
from ds_server.stores.errors import StoreError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from litestar.types import HTTPScope

    from ds_server.edge.http import HttpRequest
    from ds_server.routes._context import ServerContext

    Operation = Callable[[ServerContext, HttpRequest, str], Awaitable[Reply]]
    # The operation, and the stream: a /v1/stream path or a (bucket, stream id) pair.
    Route = tuple[Operation, str | tuple[str, str]]

log = logging.getLogger("ds_server")

_OPERATIONS: dict[str, Operation] = {
    "PUT": streams.create,
    "POST": streams.append,
    "GET": reads.read,
    "HEAD": streams.metadata,
    "DELETE": streams.remove,
}
_TEXT = "text/plain; charset=utf-8"


class StreamDispatcher:
    """The edge's ``Handler`` for stream operations."""

    def __init__(self, ctx: ServerContext) -> None:
        self._ctx = ctx

    def route(self, scope: HTTPScope) -> Route | None:
        method = scope["method"]
        operation = _OPERATIONS.get(method)
        if operation is None:
            return None
        target = stream_route(scope["path"], method)
        if target is None:
            return None
        return operation, target

    async def serve(self, route: Route, request: HttpRequest) -> Reply:
        operation, target = route
        try:
            if isinstance(target, str):
                name = stream_path(target)
            else:
                name = await bucket_stream(self._ctx.store, target[0], target[1])
            return await operation(self._ctx, request, name)
        except (StoreError, BadRequest) as error:
            status, reason, extra = describe(error)
            return Reply(status, {**extra, h.CONTENT_TYPE: _TEXT}, (reason + "\n").encode("utf-8"))
        except Exception:
            log.exception("unhandled error on %s %s", request.method, request.scope["path"])
            return Reply(500, {h.CONTENT_TYPE: _TEXT}, b"internal error\n")
