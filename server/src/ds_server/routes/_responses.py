"""Response headers shared by several handlers."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from litestar import Response

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
    raw_path = request.scope.get("raw_path") or request.scope["path"].encode("utf-8")
    raw_path = raw_path.split(b"?", 1)[0]  # some servers leave the query on raw_path
    path = quote(raw_path.decode("latin-1"), safe="/%:@!$&'()*+,;=-._~")
    return f"{request.base_url.scheme}://{request.base_url.netloc}{path}"


def no_content(headers: dict[str, str]) -> Response[bytes]:
    """A 204 with the given headers."""
    return Response(content=b"", status_code=204, headers=headers)
