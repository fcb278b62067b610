"""Snapshots and retention, composed on the stream engine.

Each stream keeps at most one visible snapshot; publishing one makes its
offset the earliest retained offset and frees the bytes before it, except
what forks of the stream still inherit and what a running bootstrap still
holds (``Retention``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from ds_server.stores.base import Retention, SnapshotInfo
from ds_server.stores.errors import (
    InvalidOffset,
    OffsetGone,
    PayloadTooLarge,
    SnapshotConflict,
    SnapshotNotFound,
)

if TYPE_CHECKING:
    from ds_server.stores._engine import Engine
    from ds_server.stores._entry import Entry
    from ds_server.stores.persistence import Persistence

log = logging.getLogger("ds_server")

# A bootstrap still running after this long no longer holds space back.
RETENTION_HOLD_SECS = 3600.0


class Snapshots:
    """The snapshots of one store's streams, and the holds readers keep on their data."""

    def __init__(self, engine: Engine, persistence: Persistence, *, max_bytes: int) -> None:
        self._engine = engine
        self._persistence = persistence
        self._max_bytes = max_bytes
        self._locks: dict[str, asyncio.Lock] = {}
        self._retentions: dict[str, list[Retention]] = {}

    def holds(self) -> int:
        """How many retentions are held now."""
        return sum(len(held) for held in self._retentions.values())

    async def publish(self, path: str, offset: int, content_type: str, data: bytes) -> SnapshotInfo:
        if len(data) > self._max_bytes:
            raise PayloadTooLarge(f"snapshot exceeds {self._max_bytes} bytes")
        entry = await self._engine.lookup(path, touch=True)
        state = entry.state
        # Snapshots of one stream are serialized by their own lock, so appends,
        # which take the stream lock, go on while the blob is written.
        async with self._locks.setdefault(state.stream_id, asyncio.Lock()):
            if offset > entry.visible_tail:
                raise SnapshotConflict("snapshot offset is beyond the stream's tail")
            if offset < state.earliest_offset:
                raise OffsetGone("snapshot offset is before the earliest retained offset")
            if not await self._engine.is_boundary(entry, offset):
                raise InvalidOffset("snapshot offset is not a message boundary")
            snapshot = SnapshotInfo(offset, content_type, len(data), self._engine.clock())
            # What the bucket's totals gain: the blob, less the previous one and
            # the bytes the snapshot's retention drops (usually a gain below 0).
            previous = state.snapshot.size if state.snapshot is not None else 0
            gain = len(data) - previous - (offset - state.earliest_offset)
            usage = entry.usage
            if usage is not None and gain > 0:
                usage.charge(gain)
            # Readers switch to the new snapshot only once it is durable.
            try:
                await self._persistence.save_snapshot(
                    replace(state, snapshot=snapshot, earliest_offset=offset), data
                )
            except BaseException:
                if usage is not None and gain > 0:
                    usage.refund(gain)
                raise
            if usage is not None:
                if self._engine.entry_at(path) is not entry:
                    # Purged meanwhile: the purge uncounted the stream as it was.
                    usage.refund(max(gain, 0))
                elif gain < 0:
                    usage.refund(-gain)
            state.snapshot, state.earliest_offset = snapshot, offset
            await self._reclaim(entry, offset)
        return snapshot

    async def read(self, path: str, offset: int) -> tuple[SnapshotInfo, bytes]:
        entry = await self._engine.lookup(path, touch=True)
        snapshot = entry.state.snapshot
        if snapshot is None or snapshot.offset != offset:
            raise SnapshotNotFound()
        return snapshot, await self._persistence.load_snapshot(entry.state.stream_id, offset)

    async def delete(self, path: str, offset: int) -> None:
        entry = await self._engine.lookup(path, touch=False)
        snapshot = entry.state.snapshot
        if snapshot is None or snapshot.offset != offset:
            raise SnapshotNotFound("no such snapshot (only the latest is kept)")
        raise SnapshotConflict("the latest snapshot cannot be deleted: bootstrap needs it")

    async def retain(self, path: str, start: int) -> Retention:
        entry = await self._engine.lookup(path, touch=False)
        retention = Retention(entry.state.stream_id, start, self._engine.clock())
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
                (e for e in self._engine.entries() if e.state.stream_id == retention.stream_id),
                None,
            )
            if entry is not None and entry.state.earliest_offset > retention.start:
                await self._reclaim(entry, entry.state.earliest_offset)

    async def _reclaim(self, entry: Entry, earliest: int) -> None:
        """Free the bytes before ``earliest`` that no fork of the stream still reads."""
        before = min(earliest, self._read_by_forks_from(entry), self._retained_from(entry))
        try:
            await self._persistence.reclaim_before(entry.state.stream_id, before)
        except Exception:
            # Space only: reads below the earliest offset are refused either way.
            log.exception("reclaiming space before offset %d failed", before)

    def _retained_from(self, entry: Entry) -> int:
        """The lowest offset a running bootstrap of the stream still reads from."""
        moment = self._engine.clock()
        held = [
            retention.start
            for retention in self._retentions.get(entry.state.stream_id, ())
            if moment - retention.since < RETENTION_HOLD_SECS
        ]
        return min(held, default=entry.state.tail)

    def _read_by_forks_from(self, entry: Entry) -> int:
        """The lowest offset of ``entry``'s bytes that its forks, at any depth, may still read.

        A fork reads its source's bytes from its own earliest offset up to its
        fork offset, and a fork of that fork reads through both.
        """
        forks: dict[Entry, list[Entry]] = {}
        for other in self._engine.entries():
            if other.base is not None:
                forks.setdefault(other.base, []).append(other)
        lowest = entry.state.tail
        pending = list(forks.get(entry, ()))
        while pending:
            fork = pending.pop()
            lowest = min(lowest, fork.state.earliest_offset)
            pending.extend(forks.get(fork, ()))
        return lowest
