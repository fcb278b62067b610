"""Buckets (the /ds surface): namespaces of streams, composed on the stream engine.

A bucket is a namespace: stream ``{bucket}/{id}`` of the /ds surface is
the same stream as ``/v1/stream/{bucket}/{id}``. Buckets are only ever
created explicitly.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

from ds_server.protocol.names import in_bucket
from ds_server.stores.base import BucketInfo, StreamListing, StreamSummary
from ds_server.stores.errors import BucketExists, BucketNotEmpty, BucketNotFound

if TYPE_CHECKING:
    from ds_server.stores._engine import Engine
    from ds_server.stores._entry import Entry
    from ds_server.stores.persistence import Persistence


class Buckets:
    """The buckets of one store, and the listing of their streams."""

    def __init__(self, engine: Engine, persistence: Persistence) -> None:
        self._engine = engine
        self._persistence = persistence
        self._created: dict[str, float] = {}

    async def load(self) -> None:
        self._created = dict(await self._persistence.load_buckets())

    async def create(self, bucket_id: str) -> BucketInfo:
        async with self._engine.catalog_lock:
            if bucket_id in self._created:
                raise BucketExists()
            created_at = self._engine.clock()
            await self._persistence.save_bucket(bucket_id, created_at)
            self._created[bucket_id] = created_at
        return self._info(bucket_id, created_at, 0)

    def get(self, bucket_id: str) -> BucketInfo:
        created_at = self._created.get(bucket_id)
        if created_at is None:
            raise BucketNotFound()
        return self._info(bucket_id, created_at, len(self._members(bucket_id)))

    def _info(self, bucket_id: str, created_at: float, streams: int) -> BucketInfo:
        ledger = self._engine.ledger
        quota = ledger.policy.quota_of(bucket_id)
        # Streams made on /v1/stream before the bucket was created count in it too.
        usage = ledger.usage.get(bucket_id)
        return BucketInfo(
            bucket_id,
            created_at,
            streams,
            used_bytes=usage.bytes if usage is not None else 0,
            used_streams=usage.streams if usage is not None else 0,
            max_bytes=quota.max_bytes,
            max_streams=quota.max_streams,
        )

    def ids(self) -> list[str]:
        """Every bucket's id."""
        return list(self._created)

    async def delete(self, bucket_id: str) -> None:
        async with self._engine.catalog_lock:
            if bucket_id not in self._created:
                raise BucketNotFound()
            if self._members(bucket_id):
                raise BucketNotEmpty()
            await self._persistence.drop_bucket(bucket_id)
            del self._created[bucket_id]

    def list_streams(
        self, bucket_id: str, *, prefix: str, after: str | None, limit: int
    ) -> StreamListing:
        if bucket_id not in self._created:
            raise BucketNotFound()
        members = self._members(bucket_id)
        ids = sorted(members)
        index = bisect.bisect_right(ids, after) if after is not None else 0
        page: list[StreamSummary] = []
        while index < len(ids) and len(page) <= limit:
            local_id = ids[index]
            index += 1
            if not local_id.startswith(prefix):
                if local_id > prefix:
                    break  # sorted: nothing later can match the prefix
                continue
            info = members[local_id].info()
            page.append(
                StreamSummary(
                    stream_id=local_id,
                    closed=info.closed,
                    content_type=info.content_type,
                    tail=info.tail,
                    created_at=info.created_at,
                    last_write_at=info.last_write_at,
                )
            )
        has_more = len(page) > limit
        return StreamListing(streams=page[:limit], has_more=has_more)

    def _members(self, bucket_id: str) -> dict[str, Entry]:
        """Live streams ``/ds/{bucket_id}/{id}`` addresses, by local id.

        A stream made through ``/v1/stream`` whose name /ds cannot address
        (``{bucket}/streams``, ``{bucket}/a/b``, ``{bucket}/x..y``) is not one.
        """
        prefix = bucket_id + "/"
        moment = self._engine.clock()
        return {
            entry.state.path[len(prefix) :]: entry
            for entry in self._engine.entries()
            if entry.state.path.startswith(prefix)
            and in_bucket(bucket_id, entry.state.path[len(prefix) :])
            and not entry.state.soft_deleted
            and not entry.state.is_expired(moment)
        }
