"""Buckets, snapshots with retention, and whole-message reads on top of the stream engine.

A bucket is a namespace: stream ``{bucket}/{id}`` of the /ds surface is
the same stream as ``/v1/stream/{bucket}/{id}``. Each stream keeps at most
one visible snapshot; publishing one makes its offset the earliest
retained offset and frees the bytes before it (except what forks of the
stream still inherit).
"""

from __future__ import annotations

import asyncio
import bisect
import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from ds_server.stores import _rules
from ds_server.stores._engine import LogStore
from ds_server.stores.base import (
    BucketInfo,
    ReadResult,
    Retention,
    SnapshotInfo,
    StreamListing,
    StreamSummary,
)
from ds_server.stores.errors import (
    BucketExists,
    BucketNotEmpty,
    BucketNotFound,
    InvalidOffset,
    OffsetGone,
    PayloadTooLarge,
    SnapshotConflict,
    SnapshotNotFound,
)

if TYPE_CHECKING:
    from ds_server.live import LiveNotifier
    from ds_server.stores._engine import _Entry
    from ds_server.stores._persistence import Persistence

log = logging.getLogger("ds_server")

# A bootstrap still running after this long no longer holds space back.
RETENTION_HOLD_SECS = 3600.0


class ExtendedLogStore(LogStore):
    """The engine plus the /ds extensions; every backend's store derives from it."""

    def __init__(
        self, live: LiveNotifier, persistence: Persistence, *, max_stream_bytes: int
    ) -> None:
        super().__init__(live, persistence, max_stream_bytes=max_stream_bytes)
        self._buckets: dict[str, float] = {}
        self._snapshot_locks: dict[str, asyncio.Lock] = {}
        self._retentions: dict[str, list[Retention]] = {}

    async def start(self) -> None:
        self._buckets = dict(await self._persistence.load_buckets())
        await super().start()

    # -- whole-message reads ---------------------------------------------------

    async def read_messages(
        self, path: str, start: int, max_bytes: int, *, retention: Retention | None = None
    ) -> ReadResult:
        entry = await self._lookup(path, touch=True)
        retained = retention is not None and retention.holds(entry.state.stream_id, start)
        return await self._read_from(
            entry, entry.info(), start, max_bytes, whole=True, retained=retained
        )

    async def retain(self, path: str, start: int) -> Retention:
        entry = await self._lookup(path, touch=False)
        retention = Retention(entry.state.stream_id, start, _rules.now())
        self._retentions.setdefault(retention.stream_id, []).append(retention)
        return retention

    async def release(self, retention: Retention) -> None:
        held = self._retentions.get(retention.stream_id, [])
        if retention in held:
            held.remove(retention)
        if not held:
            self._retentions.pop(retention.stream_id, None)
            # Space a publish could not reclaim while this reader held it.
            entry = next(
                (e for e in self._entries.values() if e.state.stream_id == retention.stream_id),
                None,
            )
            if entry is not None and entry.state.earliest_offset > retention.start:
                await self._reclaim(entry, entry.state.earliest_offset)

    # -- buckets ---------------------------------------------------------------

    async def create_bucket(self, bucket_id: str) -> BucketInfo:
        async with self._catalog_lock:
            if bucket_id in self._buckets:
                raise BucketExists()
            created_at = _rules.now()
            await self._persistence.save_bucket(bucket_id, created_at)
            self._buckets[bucket_id] = created_at
        return BucketInfo(bucket_id=bucket_id, created_at=created_at, stream_count=0)

    async def get_bucket(self, bucket_id: str) -> BucketInfo:
        created_at = self._buckets.get(bucket_id)
        if created_at is None:
            raise BucketNotFound()
        return BucketInfo(bucket_id, created_at, len(self._bucket_members(bucket_id)))

    async def delete_bucket(self, bucket_id: str) -> None:
        async with self._catalog_lock:
            if bucket_id not in self._buckets:
                raise BucketNotFound()
            if self._bucket_members(bucket_id):
                raise BucketNotEmpty()
            await self._persistence.drop_bucket(bucket_id)
            del self._buckets[bucket_id]

    async def list_bucket_streams(
        self, bucket_id: str, *, prefix: str, after: str | None, limit: int
    ) -> StreamListing:
        if bucket_id not in self._buckets:
            raise BucketNotFound()
        members = self._bucket_members(bucket_id)
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

    def _bucket_members(self, bucket_id: str) -> dict[str, _Entry]:
        """Live streams named ``{bucket_id}/{id}`` (no further ``/``), by local id."""
        prefix = bucket_id + "/"
        moment = _rules.now()
        return {
            path[len(prefix) :]: entry
            for path, entry in self._entries.items()
            if path.startswith(prefix)
            and "/" not in path[len(prefix) :]
            and not entry.state.soft_deleted
            and not entry.state.is_expired(moment)
        }

    # -- snapshots -------------------------------------------------------------

    async def publish_snapshot(
        self, path: str, offset: int, content_type: str, data: bytes
    ) -> SnapshotInfo:
        if len(data) > self._max_stream_bytes:
            raise PayloadTooLarge(f"snapshot exceeds {self._max_stream_bytes} bytes")
        entry = await self._lookup(path, touch=True)
        state = entry.state
        # Snapshots of one stream are serialized by their own lock, so appends,
        # which take the stream lock, go on while the blob is written.
        async with self._snapshot_lock(entry):
            if offset > entry.visible_tail:
                raise SnapshotConflict("snapshot offset is beyond the stream's tail")
            if offset < state.earliest_offset:
                raise OffsetGone("snapshot offset is before the earliest retained offset")
            if not await self._is_boundary(entry, offset):
                raise InvalidOffset("snapshot offset is not a message boundary")
            snapshot = SnapshotInfo(offset, content_type, len(data), _rules.now())
            # Readers switch to the new snapshot only once it is durable.
            await self._persistence.save_snapshot(
                replace(state, snapshot=snapshot, earliest_offset=offset), data
            )
            state.snapshot, state.earliest_offset = snapshot, offset
            await self._reclaim(entry, offset)
        return snapshot

    async def read_snapshot(self, path: str, offset: int) -> tuple[SnapshotInfo, bytes]:
        entry = await self._lookup(path, touch=True)
        snapshot = entry.state.snapshot
        if snapshot is None or snapshot.offset != offset:
            raise SnapshotNotFound()
        return snapshot, await self._persistence.load_snapshot(entry.state.stream_id, offset)

    async def delete_snapshot(self, path: str, offset: int) -> None:
        entry = await self._lookup(path, touch=False)
        snapshot = entry.state.snapshot
        if snapshot is None or snapshot.offset != offset:
            raise SnapshotNotFound("no such snapshot (only the latest is kept)")
        raise SnapshotConflict("the latest snapshot cannot be deleted: bootstrap needs it")

    def _snapshot_lock(self, entry: _Entry) -> asyncio.Lock:
        return self._snapshot_locks.setdefault(entry.state.stream_id, asyncio.Lock())

    async def _reclaim(self, entry: _Entry, earliest: int) -> None:
        """Free the bytes before ``earliest`` that no fork of the stream still reads."""
        before = min(earliest, self._read_by_forks_from(entry), self._retained_from(entry))
        try:
            await self._persistence.reclaim_before(entry.state.stream_id, before)
        except Exception:
            # Space only: reads below the earliest offset are refused either way.
            log.exception("reclaiming space before offset %d failed", before)

    def _retained_from(self, entry: _Entry) -> int:
        """The lowest offset a running bootstrap of the stream still reads from."""
        moment = _rules.now()
        held = [
            retention.start
            for retention in self._retentions.get(entry.state.stream_id, ())
            if moment - retention.since < RETENTION_HOLD_SECS
        ]
        return min(held, default=entry.state.tail)

    def _read_by_forks_from(self, entry: _Entry) -> int:
        """The lowest offset of ``entry``'s bytes that its forks, at any depth, may still read.

        A fork reads its source's bytes from its own earliest offset up to its
        fork offset, and a fork of that fork reads through both.
        """
        forks: dict[_Entry, list[_Entry]] = {}
        for other in self._entries.values():
            if other.base is not None:
                forks.setdefault(other.base, []).append(other)
        lowest = entry.state.tail
        pending = list(forks.get(entry, ()))
        while pending:
            fork = pending.pop()
            lowest = min(lowest, fork.state.earliest_offset)
            pending.extend(forks.get(fork, ()))
        return lowest
