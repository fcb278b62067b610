"""Litestar's view of the stream paths, which the dispatcher serves before Litestar sees them.

What still reaches Litestar there: CORS preflights (answered by the OPTIONS
handler Litestar adds to these routes), methods the protocol does not
define (405), stream paths with a reserved ``__ds`` segment deeper
than the subscription API (never a stream), and a top-level stream's
snapshots and bootstrap (``routes.top_level``).
"""

from __future__ import annotations

from typing import Any

from litestar import HttpMethod, Response, route
from litestar.exceptions import MethodNotAllowedException
from litestar.params import FromPath

from ds_server.routes import top_level
from ds_server.routes._context import AnyRequest
from ds_server.routes.bucket_streams import STREAM_PATH
from ds_server.routes.subscriptions import reject_reserved

_METHODS = [
    HttpMethod.GET,
    HttpMethod.HEAD,
    HttpMethod.PUT,
    HttpMethod.POST,
    HttpMethod.DELETE,
    HttpMethod.PATCH,
    HttpMethod.TRACE,
]


@route("/{path:path}", http_method=_METHODS)
async def stream_path_fallback(request: AnyRequest, path: FromPath[str]) -> Response[Any]:
    """A top-level stream's snapshots and bootstrap; reserved ``__ds`` paths get 404;
    other methods 405."""
    reserved = reject_reserved(request)
    if reserved is not None:
        return reserved
    extension = await top_level.serve(request, path)
    if extension is not None:
        return extension
    raise MethodNotAllowedException()


@route(STREAM_PATH, http_method=_METHODS)
async def bucket_stream_fallback(
    request: AnyRequest, bucket: FromPath[str], stream: FromPath[str]
) -> Response[bytes]:
    """Methods the protocol does not define: 405."""
    raise MethodNotAllowedException()
