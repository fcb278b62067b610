"""The extensions of a top-level stream, below its /v1/stream path.

A stream of one segment (``pg-items``) has no /ds spelling, so its
snapshots and bootstrap are served as ``/v1/stream/{stream}/bootstrap`` and
``/v1/stream/{stream}/snapshot[/{offset}]`` (``edge.surfaces.TOP_LEVEL_EXTENSION``),
with the same answers as on /ds. Litestar prefers the stream prefix's
catch-all route to any more specific one, so the fallback hands them here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litestar.exceptions import MethodNotAllowedException

from ds_server.edge.surfaces import TOP_LEVEL_EXTENSION
from ds_server.protocol.names import stream_path
from ds_server.routes import bootstrap, snapshots

if TYPE_CHECKING:
    from litestar import Response

    from ds_server.routes._context import AnyRequest


async def serve(request: AnyRequest, path: str) -> Response[Any] | None:
    """The answer of a top-level stream's extension endpoint; None for any other path."""
    match = TOP_LEVEL_EXTENSION.fullmatch(path.lstrip("/"))
    if match is None:
        return None
    name = stream_path(match["stream"])
    method = request.method
    offset = match["offset"]
    if match["bootstrap"] is not None:
        if method == "GET":
            return await bootstrap.of_stream(request, name)
    elif offset is None:
        if method == "GET":
            return await snapshots.latest(request, name)
    elif method == "PUT":
        return await snapshots.publish(request, name, offset)
    elif method == "GET":
        return await snapshots.read(request, name, offset)
    elif method == "DELETE":
        return await snapshots.remove(request, name, offset)
    raise MethodNotAllowedException()
