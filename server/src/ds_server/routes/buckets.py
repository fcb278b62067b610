"""Buckets on the /ds surface: create, metadata, listing, delete (extensions section 1)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qs

import msgspec
from litestar import Response, delete, get, put
from litestar.params import FromPath

from ds_server.protocol import headers as h
from ds_server.protocol.errors import BadRequest
from ds_server.protocol.names import bucket_id as valid_bucket_id
from ds_server.routes._context import AnyRequest, context
from ds_server.routes._responses import no_content

if TYPE_CHECKING:
    from ds_server.stores.base import BucketInfo, StreamListing

DEFAULT_LIMIT = 1000
_JSON = {h.CONTENT_TYPE: "application/json", h.CACHE_CONTROL: "no-store"}


class _Usage(msgspec.Struct):
    bytes: int
    streams: int


class _Quota(msgspec.Struct):
    max_bytes: int | None  # None (JSON null): no limit
    max_streams: int | None


class _Bucket(msgspec.Struct):
    bucket_id: str
    streams: int
    created_at_ms: int
    # What the bucket's storage quota counts, and the quota (docs/operations.md).
    usage: _Usage
    quota: _Quota


class _Row(msgspec.Struct):
    stream_id: str
    status: str
    content_type: str
    tail_offset: int
    created_at_ms: int
    last_write_at_ms: int


class _Listing(msgspec.Struct):
    bucket_id: str
    prefix: str
    stream_count: int
    streams: list[_Row]
    next_cursor: str | None
    has_more: bool


_encode = msgspec.json.Encoder().encode


@put("/{bucket:str}", status_code=201)
async def create_bucket(request: AnyRequest, bucket: FromPath[str]) -> Response[bytes]:
    """201 with the new bucket; 409 when it exists; buckets are only made explicitly."""
    info = await context(request).store.create_bucket(valid_bucket_id(bucket))
    return Response(content=_encode(_bucket(info)), status_code=201, headers=_JSON)


@get("/{bucket:str}")
async def bucket_metadata(request: AnyRequest, bucket: FromPath[str]) -> Response[bytes]:
    """The bucket's id, stream count, creation time, storage usage and quota."""
    info = await context(request).store.get_bucket(valid_bucket_id(bucket))
    return Response(content=_encode(_bucket(info)), headers=_JSON)


@delete("/{bucket:str}", status_code=200)
async def delete_bucket(request: AnyRequest, bucket: FromPath[str]) -> Response[bytes]:
    """204; 409 while the bucket still has streams."""
    await context(request).store.delete_bucket(valid_bucket_id(bucket))
    return no_content({})


@get("/{bucket:str}/streams")
async def list_streams(request: AnyRequest, bucket: FromPath[str]) -> Response[bytes]:
    """Bucket-local stream ids in order, filtered by ``prefix``, paged by ``after``/``limit``."""
    bucket = valid_bucket_id(bucket)
    prefix, after, limit = _listing_query(request.scope["query_string"])
    listing = await context(request).store.list_bucket_streams(
        bucket, prefix=prefix or "", after=after, limit=limit
    )
    return Response(content=_encode(_listing(bucket, prefix, listing)), headers=_JSON)


def _listing_query(query_string: bytes) -> tuple[str | None, str | None, int]:
    try:
        params = parse_qs(query_string.decode("utf-8"), keep_blank_values=True, errors="strict")
    except (UnicodeDecodeError, ValueError):
        raise BadRequest("malformed query string") from None
    values: dict[str, str] = {}
    for name in ("prefix", "after", "limit"):
        found = params.get(name, [])
        if len(found) > 1:
            raise BadRequest(f"{name} must be given once")
        if found:
            values[name] = found[0]
    limit_text = values.get("limit")
    limit = DEFAULT_LIMIT
    if limit_text is not None:
        if not limit_text.isascii() or not limit_text.isdigit() or len(limit_text) > 4:
            raise BadRequest("limit must be an integer from 1 to 1000")
        limit = int(limit_text)
        if not 1 <= limit <= DEFAULT_LIMIT:
            raise BadRequest("limit must be an integer from 1 to 1000")
    return values.get("prefix"), values.get("after"), limit


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def _bucket(info: BucketInfo) -> _Bucket:
    return _Bucket(
        info.bucket_id,
        info.stream_count,
        _ms(info.created_at),
        _Usage(info.used_bytes, info.used_streams),
        _Quota(info.max_bytes, info.max_streams),
    )


def _listing(bucket: str, prefix: str | None, listing: StreamListing) -> _Listing:
    rows = [
        _Row(
            stream_id=row.stream_id,
            status="Closed" if row.closed else "Open",
            content_type=row.content_type,
            tail_offset=row.tail,
            created_at_ms=_ms(row.created_at),
            last_write_at_ms=_ms(row.last_write_at),
        )
        for row in listing.streams
    ]
    # No prefix filters by the empty one: every id is eligible.
    return _Listing(bucket, prefix or "", len(rows), rows, listing.next_cursor, listing.has_more)
