"""Reading request bodies under a size limit, without buffering more than the limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.routes._request import BadRequest
from ds_server.stores.errors import PayloadTooLarge

if TYPE_CHECKING:
    from ds_server.routes._context import AnyRequest


async def read_body(request: AnyRequest, limit: int) -> bytes:
    """The whole body; 413 as soon as it is known to exceed ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isascii() or not declared.isdigit():
            raise BadRequest("malformed Content-Length")
        if len(declared) > 18 or int(declared) > limit:
            raise PayloadTooLarge(f"body exceeds {limit} bytes")
    parts: list[bytes] = []
    size = 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise PayloadTooLarge(f"body exceeds {limit} bytes")
        parts.append(part)
    return b"".join(parts)
