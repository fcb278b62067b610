"""/bootstrap: the snapshot and every retained message in one multipart response.

The response streams: it reads the stream a page at a time, so a bootstrap
of a large stream never holds it in memory. Its end is the tail as of the
request; later appends are left for the live read that follows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from litestar import get
from litestar.params import FromPath
from litestar.response import Stream

from ds_server.protocol import headers as h
from ds_server.protocol import multipart
from ds_server.protocol.offsets import format_offset
from ds_server.routes._context import AnyRequest, context
from ds_server.routes._request import BadRequest
from ds_server.routes.bucket_streams import STREAM_PATH, bucket_stream

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ds_server.stores.base import ReadResult, Store

NO_SNAPSHOT = "-1"
EMPTY_SNAPSHOT_TYPE = "application/octet-stream"


@get(STREAM_PATH + "/bootstrap")
async def bootstrap(request: AnyRequest, bucket: FromPath[str], stream: FromPath[str]) -> Stream:
    """Snapshot (or an empty part) first, then one part per retained message."""
    name = await bucket_stream(request, bucket, stream)
    # Any ``live`` parameter, even an empty one, asks for what /bootstrap never does.
    query = parse_qs(request.scope["query_string"].decode("latin-1"), keep_blank_values=True)
    if "live" in query:
        raise BadRequest(
            "/bootstrap is one-shot: continue with a live read from Stream-Next-Offset"
        )
    ctx = context(request)
    store = ctx.store
    info = await store.head(name)
    snapshot = info.snapshot
    if snapshot is not None:
        _, blob = await store.read_snapshot(name, snapshot.offset)
        start, first_type = snapshot.offset, snapshot.content_type
    else:
        blob, start, first_type = b"", info.earliest_offset, EMPTY_SNAPSHOT_TYPE
    end = info.tail
    chunk = ctx.settings.server.read_chunk_bytes
    # The first page is read before answering, so a stream gone meanwhile is a 4xx.
    first_page = await store.read_messages(name, start, chunk) if start < end else None
    boundary = multipart.new_boundary()
    headers = {
        h.CONTENT_TYPE: multipart.content_type(boundary),
        h.STREAM_SNAPSHOT_OFFSET: format_offset(snapshot.offset) if snapshot else NO_SNAPSHOT,
        h.STREAM_NEXT_OFFSET: format_offset(end),
        h.STREAM_UP_TO_DATE: "true",
        h.CACHE_CONTROL: "no-store",
    }
    body = _parts(
        store,
        name,
        boundary,
        multipart.part(boundary, first_type, blob),
        first_page,
        start,
        end,
        content_type=info.content_type,
        chunk=chunk,
    )
    return Stream(body, status_code=200, headers=headers)


async def _parts(
    store: Store,
    name: str,
    boundary: str,
    first_part: bytes,
    page: ReadResult | None,
    position: int,
    end: int,
    *,
    content_type: str,
    chunk: int,
) -> AsyncIterator[bytes]:
    yield first_part
    while page is not None and page.chunks:
        for message in page.chunks:
            if position >= end:
                break
            yield multipart.part(boundary, content_type, message)
            position += len(message)
        if position >= end:
            break
        page = await store.read_messages(name, position, chunk)
    yield multipart.closing(boundary)
