"""Response headers shared by several handlers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from litestar import Response

from ds_server.edge.http import absolute_url
from ds_server.protocol import headers as h
from ds_server.protocol.expiry import format_expires_at
from ds_server.protocol.offsets import format_offset

if TYPE_CHECKING:
    from ds_server.routes._context import AnyRequest
    from ds_server.stores.base import StreamInfo


def metadata_headers(info: StreamInfo) -> dict[str, str]:
    """Content type, tail offset, closure and the configured expiry of a stream."""
    headers = {
        h.CONTENT_TYPE: info.content_type,
        h.STREAM_NEXT_OFFSET: format_offset(info.tail),
    }
    if info.closed:
        headers[h.STREAM_CLOSED] = h.TRUE
    if info.expiry.ttl_seconds is not None:
        headers[h.STREAM_TTL] = str(info.expiry.ttl_seconds)
    if info.expiry.expires_at is not None:
        headers[h.STREAM_EXPIRES_AT] = format_expires_at(info.expiry.expires_at)
    if info.snapshot is not None:
        headers[h.STREAM_SNAPSHOT_OFFSET] = format_offset(info.snapshot.offset)
    return headers


def stream_location(request: AnyRequest) -> str:
    """The absolute URL of the requested stream, percent-encoded as the client sent it."""
    return absolute_url(request.scope, request.headers.get("host"))


def no_content(headers: dict[str, str]) -> Response[bytes]:
    """A 204 with the given headers."""
    return Response(content=b"", status_code=204, headers=headers)
