"""Bucket-scoped stream names for the Litestar routes below a stream (snapshots, bootstrap).

The base operations on ``/ds/{bucket}/{stream}`` themselves are served by
the dispatcher (``routes/dispatch.py``); a stream there is the stream
``/v1/stream/{bucket}/{stream}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.routes._context import context
from ds_server.routes._ids import bucket_id, stream_name

if TYPE_CHECKING:
    from ds_server.routes._context import AnyRequest

STREAM_PATH = "/{bucket:str}/{stream:str}"


async def bucket_stream(request: AnyRequest, bucket: str, stream: str) -> str:
    """The stream's name, once the ids are valid and the bucket exists."""
    name = stream_name(bucket_id(bucket), stream)
    await context(request).store.get_bucket(bucket)
    return name
