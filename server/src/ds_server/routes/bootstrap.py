"""/bootstrap: the snapshot and every retained message in one multipart response.

The response streams: it reads the stream a page at a time, so a bootstrap
of a large stream never holds it in memory. Its end is the tail as of the
request; later appends are left for the live read that follows. While it
runs it holds the stream's data from its starting offset (``Store.retain``),
so a snapshot published meanwhile neither cuts it short nor frees what it
still has to send.
"""

from __future__ import annotations

from dataclasses import dataclass
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
from ds_server.stores.errors import OffsetGone, SnapshotNotFound

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ds_server.stores.base import ReadResult, Retention, Store, StreamInfo

NO_SNAPSHOT = "-1"
EMPTY_SNAPSHOT_TYPE = "application/octet-stream"
# A snapshot published while a bootstrap takes hold of its starting point
# makes that start stale; starting over a few times settles it.
_OPEN_ATTEMPTS = 3


@dataclass(slots=True)
class _Opening:
    """What a bootstrap begins with, read as one consistent view, and its hold on the data."""

    info: StreamInfo
    blob: bytes
    first_type: str
    start: int
    first_page: ReadResult | None
    retention: Retention


async def _open(store: Store, name: str, chunk: int) -> _Opening:
    """The snapshot (or the empty first part) and the first page of the updates after it."""
    attempt = 1
    while True:
        info = await store.head(name)
        snapshot = info.snapshot
        start = snapshot.offset if snapshot is not None else info.earliest_offset
        retention = await store.retain(name, start)
        try:
            # A snapshot published before the hold began may have freed data from
            # ``start`` on (and its blob replaced ours): start over from the new one.
            if (await store.head(name)).earliest_offset > start:
                raise OffsetGone("a snapshot moved the earliest offset meanwhile")
            if snapshot is not None:
                _, blob = await store.read_snapshot(name, snapshot.offset)
                first_type = snapshot.content_type
            else:
                blob, first_type = b"", EMPTY_SNAPSHOT_TYPE
            # Read before answering, so a stream gone meanwhile is a 4xx.
            first_page = None
            if start < info.tail:
                first_page = await store.read_messages(name, start, chunk, retention=retention)
        except (SnapshotNotFound, OffsetGone):
            await store.release(retention)
            if attempt == _OPEN_ATTEMPTS:
                raise
            attempt += 1
            continue
        except BaseException:
            await store.release(retention)
            raise
        return _Opening(info, blob, first_type, start, first_page, retention)


@get(STREAM_PATH + "/bootstrap")
async def bootstrap(request: AnyRequest, bucket: FromPath[str], stream: FromPath[str]) -> Stream:
    """Snapshot (or an empty part) first, then one part per retained message."""
    name = await bucket_stream(context(request).store, bucket, stream)
    # Any ``live`` parameter, even an empty one, asks for what /bootstrap never does.
    query = parse_qs(request.scope["query_string"].decode("latin-1"), keep_blank_values=True)
    if "live" in query:
        raise BadRequest(
            "/bootstrap is one-shot: continue with a live read from Stream-Next-Offset"
        )
    ctx = context(request)
    store = ctx.store
    chunk = ctx.settings.server.read_chunk_bytes
    opening = await _open(store, name, chunk)
    info, snapshot = opening.info, opening.info.snapshot
    boundary = multipart.new_boundary()
    headers = {
        h.CONTENT_TYPE: multipart.content_type(boundary),
        h.STREAM_SNAPSHOT_OFFSET: format_offset(snapshot.offset) if snapshot else NO_SNAPSHOT,
        h.STREAM_NEXT_OFFSET: format_offset(info.tail),
        h.STREAM_UP_TO_DATE: "true",
        h.CACHE_CONTROL: "no-store",
    }
    body = _parts(
        store,
        name,
        boundary,
        multipart.part(boundary, opening.first_type, opening.blob),
        opening,
        content_type=info.content_type,
        chunk=chunk,
    )
    return Stream(body, status_code=200, headers=headers)


async def _parts(
    store: Store,
    name: str,
    boundary: str,
    first_part: bytes,
    opening: _Opening,
    *,
    content_type: str,
    chunk: int,
) -> AsyncIterator[bytes]:
    page, position, end = opening.first_page, opening.start, opening.info.tail
    try:
        yield first_part
        while page is not None and page.chunks:
            for message in page.chunks:
                if position >= end:
                    break
                yield multipart.part(boundary, content_type, message)
                position += len(message)
            if position >= end:
                break
            page = await store.read_messages(name, position, chunk, retention=opening.retention)
        yield multipart.closing(boundary)
    finally:
        # Also when the client leaves early: the space it held is freed now.
        await store.release(opening.retention)
