"""Reading request bodies under a size limit, without buffering more than the limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.routes._request import BadRequest
from ds_server.stores.errors import PayloadTooLarge

if TYPE_CHECKING:
    from ds_server.routes._context import AnyRequest


def check_declared_length(declared: str | None, limit: int) -> None:
    """400 for a malformed Content-Length, 413 for one over ``limit``, before reading."""
    if declared is None:
        return
    if not declared.isascii() or not declared.isdigit():
        raise BadRequest("malformed Content-Length")
    # Bounded length first: int() refuses strings of thousands of digits.
    if len(declared) > 18 or int(declared) > limit:
        raise PayloadTooLarge(f"body exceeds {limit} bytes")


async def read_body(request: AnyRequest, limit: int) -> bytes:
    """The whole body; 413 as soon as it is known to exceed ``limit`` bytes."""
    check_declared_length(request.headers.get("content-length"), limit)
    parts: list[bytes] = []
    size = 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise PayloadTooLarge(f"body exceeds {limit} bytes")
        parts.append(part)
    return b"".join(parts)
