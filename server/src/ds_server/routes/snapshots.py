"""Snapshots of a stream (extensions section 2): a bucket's, or a top-level stream's.

``/ds/{bucket}/{stream}/snapshot...`` and, for streams of one segment (which
have no /ds spelling, such as ``pg-items``), ``/v1/stream/{stream}/snapshot...``.
"""

from __future__ import annotations

from urllib.parse import quote

from litestar import Response, delete, get, put
from litestar.params import FromPath

from ds_server.edge.http import read_body
from ds_server.protocol import headers as h
from ds_server.protocol.errors import BadRequest
from ds_server.protocol.offsets import InvalidOffsetError, format_offset, parse_position
from ds_server.routes._context import AnyRequest, context
from ds_server.routes._responses import no_content, stream_location
from ds_server.routes.bucket_streams import STREAM_PATH, bucket_stream
from ds_server.stores.errors import SnapshotNotFound

SNAPSHOT_PATH = STREAM_PATH + "/snapshot"
DEFAULT_CONTENT_TYPE = "application/octet-stream"


def snapshot_offset(text: str) -> int:
    """The snapshot offset of a path segment (already percent-decoded)."""
    try:
        return parse_position(text)
    except InvalidOffsetError as exc:
        raise BadRequest(str(exc)) from None


@put(SNAPSHOT_PATH + "/{offset:str}", status_code=201)
async def publish_snapshot(
    request: AnyRequest, bucket: FromPath[str], stream: FromPath[str], offset: FromPath[str]
) -> Response[bytes]:
    """204: the snapshot is visible and its offset is now the earliest retained offset."""
    return await _publish(
        request, await bucket_stream(context(request).store, bucket, stream), offset
    )


async def _publish(request: AnyRequest, name: str, offset: str) -> Response[bytes]:
    position = snapshot_offset(offset)
    ctx = context(request)
    data = await read_body(request, ctx.settings.limits.max_snapshot_bytes)
    content_type = request.headers.get(h.CONTENT_TYPE) or DEFAULT_CONTENT_TYPE
    await ctx.store.publish_snapshot(name, position, content_type, data)
    return no_content({h.STREAM_SNAPSHOT_OFFSET: format_offset(position)})


@get(SNAPSHOT_PATH)
async def latest_snapshot(
    request: AnyRequest, bucket: FromPath[str], stream: FromPath[str]
) -> Response[bytes]:
    """307 to the latest snapshot; 404 when the stream has none."""
    return await _latest(request, await bucket_stream(context(request).store, bucket, stream))


async def _latest(request: AnyRequest, name: str) -> Response[bytes]:
    info = await context(request).store.head(name)
    if info.snapshot is None:
        raise SnapshotNotFound("the stream has no snapshot")
    location = stream_location(request) + "/" + quote(format_offset(info.snapshot.offset))
    return Response(
        content=b"",
        status_code=307,
        headers={h.LOCATION: location, h.CACHE_CONTROL: "no-store"},
    )


@get(SNAPSHOT_PATH + "/{offset:str}")
async def read_snapshot(
    request: AnyRequest, bucket: FromPath[str], stream: FromPath[str], offset: FromPath[str]
) -> Response[bytes]:
    """The snapshot blob with its stored content type."""
    return await _read(request, await bucket_stream(context(request).store, bucket, stream), offset)


async def _read(request: AnyRequest, name: str, offset: str) -> Response[bytes]:
    store = context(request).store
    snapshot, data = await store.read_snapshot(name, snapshot_offset(offset))
    tail = (await store.head(name)).tail
    headers = {
        h.CONTENT_TYPE: snapshot.content_type,
        h.STREAM_SNAPSHOT_OFFSET: format_offset(snapshot.offset),
        h.STREAM_NEXT_OFFSET: format_offset(snapshot.offset),
        h.STREAM_UP_TO_DATE: "true" if tail == snapshot.offset else "false",
        h.CACHE_CONTROL: "no-store",
    }
    return Response(content=data, headers=headers, status_code=200)


@delete(SNAPSHOT_PATH + "/{offset:str}", status_code=200)
async def delete_snapshot(
    request: AnyRequest, bucket: FromPath[str], stream: FromPath[str], offset: FromPath[str]
) -> Response[bytes]:
    """404 for unknown or superseded snapshots; 409 for the latest, which bootstrap needs."""
    name = await bucket_stream(context(request).store, bucket, stream)
    await context(request).store.delete_snapshot(name, snapshot_offset(offset))
    return no_content({})


# A top-level stream's snapshots (routes.top_level dispatches to these).
publish = _publish
latest = _latest
read = _read


async def remove(request: AnyRequest, name: str, offset: str) -> Response[bytes]:
    await context(request).store.delete_snapshot(name, snapshot_offset(offset))
    return no_content({})
