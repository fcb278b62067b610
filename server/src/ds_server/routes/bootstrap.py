"""/bootstrap: the snapshot and every retained message in one multipart response.

The response streams: it reads the stream a page at a time, so a bootstrap
of a large stream never holds it in memory. Its end is the tail as of the
request; later appends are left for the live read that follows. How it
begins, and its hold on the data meanwhile, is the store's
(``Store.begin_bootstrap``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from litestar import get
from litestar.params import FromPath
from litestar.response import Stream

from ds_server.protocol import headers as h
from ds_server.protocol import multipart
from ds_server.protocol.errors import BadRequest
from ds_server.protocol.offsets import format_offset
from ds_server.routes._context import AnyRequest, context
from ds_server.routes.bucket_streams import STREAM_PATH, bucket_stream

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ds_server.stores.base import BootstrapStart, Store

NO_SNAPSHOT = "-1"


@get(STREAM_PATH + "/bootstrap")
async def bootstrap(request: AnyRequest, bucket: FromPath[str], stream: FromPath[str]) -> Stream:
    """Snapshot (or an empty part) first, then one part per retained message."""
    return await _bootstrap(request, await bucket_stream(context(request).store, bucket, stream))


async def of_stream(request: AnyRequest, name: str) -> Stream:
    """The bootstrap of the stream ``name`` (a top-level stream's: routes.top_level)."""
    return await _bootstrap(request, name)


async def _bootstrap(request: AnyRequest, name: str) -> Stream:
    store = context(request).store
    # Any ``live`` parameter, even an empty one, asks for what /bootstrap never does.
    query = parse_qs(request.scope["query_string"].decode("latin-1"), keep_blank_values=True)
    if "live" in query:
        raise BadRequest(
            "/bootstrap is one-shot: continue with a live read from Stream-Next-Offset"
        )
    chunk = context(request).settings.server.read_chunk_bytes
    begun = await store.begin_bootstrap(name, chunk)
    info, snapshot = begun.info, begun.info.snapshot
    boundary = multipart.new_boundary()
    headers = {
        h.CONTENT_TYPE: multipart.content_type(boundary),
        h.STREAM_SNAPSHOT_OFFSET: format_offset(snapshot.offset) if snapshot else NO_SNAPSHOT,
        h.STREAM_NEXT_OFFSET: format_offset(info.tail),
        h.STREAM_UP_TO_DATE: "true",
        h.CACHE_CONTROL: "no-store",
    }
    return Stream(_parts(store, name, boundary, begun, chunk), status_code=200, headers=headers)


async def _parts(
    store: Store, name: str, boundary: str, begun: BootstrapStart, chunk: int
) -> AsyncIterator[bytes]:
    page, position, end = begun.first_page, begun.start, begun.info.tail
    content_type = begun.info.content_type
    try:
        yield multipart.part(boundary, begun.snapshot_type, begun.snapshot)
        while page is not None and page.chunks:
            for message in page.chunks:
                if position >= end:
                    break
                yield multipart.part(boundary, content_type, message)
                position += len(message)
            if position >= end:
                break
            page = await store.read_messages(name, position, chunk, retention=begun.retention)
        yield multipart.closing(boundary)
    finally:
        # Also when the client leaves early: the space it held is freed now.
        await store.release(begun.retention)
