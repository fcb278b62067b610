"""The base protocol under /ds/{bucket}/{stream}: the same operations, inside a bucket.

A stream here is the stream ``/v1/stream/{bucket}/{stream}``; this surface
adds the bucket's existence check (404 when it is missing) and the
stricter identifier rules of the extensions.
"""

from __future__ import annotations

from litestar import Response, delete, get, head, post, put
from litestar.params import FromPath
from litestar.response import Stream

from ds_server.routes import reads, streams
from ds_server.routes._context import AnyRequest, context
from ds_server.routes._ids import bucket_id, stream_name

STREAM_PATH = "/{bucket:str}/{stream:str}"


async def bucket_stream(request: AnyRequest, bucket: str, stream: str) -> str:
    """The stream's name, once the ids are valid and the bucket exists."""
    name = stream_name(bucket_id(bucket), stream)
    await context(request).store.get_bucket(bucket)
    return name


@put(STREAM_PATH, status_code=201)
async def create_in_bucket(
    request: AnyRequest, bucket: FromPath[str], stream: FromPath[str]
) -> Response[bytes]:
    """Create a stream in an existing bucket (never creates the bucket)."""
    return await streams.create(request, await bucket_stream(request, bucket, stream))


@post(STREAM_PATH)
async def append_in_bucket(
    request: AnyRequest, bucket: FromPath[str], stream: FromPath[str]
) -> Response[bytes]:
    """Append to (or close) a bucket's stream."""
    return await streams.append(request, await bucket_stream(request, bucket, stream))


@get(STREAM_PATH)
async def read_in_bucket(
    request: AnyRequest, bucket: FromPath[str], stream: FromPath[str]
) -> Response[bytes] | Stream:
    """Catch-up, long-poll or SSE read of a bucket's stream."""
    return await reads.read(request, await bucket_stream(request, bucket, stream))


@head(STREAM_PATH)
async def head_in_bucket(
    request: AnyRequest, bucket: FromPath[str], stream: FromPath[str]
) -> Response[None]:
    """Metadata, with Stream-Snapshot-Offset when a snapshot exists."""
    return await streams.metadata(request, await bucket_stream(request, bucket, stream))


@delete(STREAM_PATH, status_code=200)
async def delete_in_bucket(
    request: AnyRequest, bucket: FromPath[str], stream: FromPath[str]
) -> Response[bytes]:
    """Delete a bucket's stream."""
    return await streams.remove(request, await bucket_stream(request, bucket, stream))
