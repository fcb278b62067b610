"""Streams addressed in a bucket (``/ds/{bucket}/{stream}``): the name, once the bucket exists.

Every route below a bucket's stream (the base operations in
``routes/dispatch.py``, snapshots, bootstrap) resolves it here, so every
one of them answers a missing bucket the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ds_server.protocol.names import bucket_id, stream_name

if TYPE_CHECKING:
    from ds_server.stores.base import Store

# Litestar's path of a bucket's stream, below the /ds router.
STREAM_PATH = "/{bucket:str}/{stream:str}"


async def bucket_stream(store: Store, bucket: str, stream: str) -> str:
    """The stream's name (``{bucket}/{stream}``) once the ids are valid and the bucket exists."""
    name = stream_name(bucket_id(bucket), stream)
    await store.get_bucket(bucket)  # BucketNotFound: 404
    return name
