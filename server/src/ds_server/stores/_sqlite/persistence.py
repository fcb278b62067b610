"""``Persistence`` on SQLite: ACID mutations through one group-committing writer, pooled reads."""

from __future__ import annotations

import logging
import sqlite3
from functools import partial
from typing import TYPE_CHECKING

from ds_server.stores._sqlite import chunks, mutations, rows
from ds_server.stores._sqlite.readers import Readers
from ds_server.stores._sqlite.writer import Writer, WriterStats, reclaim_all
from ds_server.stores.errors import SnapshotNotFound, StoreError, StreamNotFound
from ds_server.stores.persistence import Persistence

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Sequence
    from pathlib import Path

    from ds_server.stores._commit import AppendCommit
    from ds_server.stores._rules import StreamState
    from ds_server.stores.persistence import Chunk

log = logging.getLogger("ds_server.sqlite")

_READ_THREADS = 4


class SqlitePersistence(Persistence):
    """Streams in one SQLite database file (WAL mode, ``synchronous=FULL``).

    Every mutation (an append with the producer and Stream-Seq state that
    guard it, a create, a purge, a snapshot with the earliest offset it
    moves) is one transaction, or part of a shared one that commits or rolls
    back as a whole. The pages of deleted and expired streams, of replaced
    snapshots and of chunks before a snapshot are handed back to the file
    system by the writer between batches (see ``schema`` and ``writer``).
    """

    def __init__(
        self, path: Path, *, max_db_bytes: int = 0, read_threads: int = _READ_THREADS
    ) -> None:
        self._path = path
        self._writer = Writer(path, max_db_bytes=max_db_bytes)
        self._readers = Readers(path, read_threads)
        # stream_id -> sid of every stored stream; reads and appends need the sid.
        self._sids: dict[str, int] = {}

    @property
    def stats(self) -> WriterStats:
        """Write transactions and mutations committed so far."""
        return self._writer.stats

    async def open(self) -> list[StreamState]:
        await self._start()
        states, self._sids = await self._writer.submit(rows.load_states)
        return states

    async def _start(self) -> None:
        # Buckets are loaded before the streams, so whichever comes first opens.
        if not self._writer.started:
            await self._writer.start()

    async def close(self) -> None:
        await self._readers.close()
        await self._writer.stop()

    def reserve(self, size: int) -> None:
        return None  # the database's limit is checked when the writer commits

    async def create(self, state: StreamState, messages: Sequence[bytes]) -> None:
        sid = await self._writer.submit(
            partial(mutations.create_stream, state=state, messages=messages)
        )
        self._sids[state.stream_id] = sid

    async def append(self, commit: AppendCommit) -> asyncio.Future[None] | None:
        if not (commit.messages or commit.close or commit.producer or commit.stream_seq):
            return None
        sid = self._sids[commit.stream_id]
        return self._writer.submit(partial(mutations.append, sid=sid, commit=commit))

    async def save_state(self, state: StreamState) -> None:
        sid = self._sids[state.stream_id]
        await self._writer.submit(partial(mutations.save_state, sid=sid, state=state))

    async def save_access(self, accesses: Sequence[tuple[str, float]]) -> None:
        known = [(self._sids[sid], when) for sid, when in accesses if sid in self._sids]
        if not known:
            return
        try:
            await self._writer.submit(partial(mutations.save_access, accesses=known))
        except (StoreError, sqlite3.Error) as error:
            # Best effort: a lost access time only makes a sliding TTL expire early.
            log.warning("could not record stream access times: %s", error)

    async def purge(self, state: StreamState) -> None:
        sid = self._sids.get(state.stream_id)
        if sid is None:
            return
        await self._writer.submit(partial(mutations.purge, sid=sid), frees=True)
        del self._sids[state.stream_id]

    async def reclaim(self) -> int:
        """Return all free pages to the file system now and truncate the WAL; pages freed.

        The writer also does this by itself, a little at a time, when idle.
        """
        return await self._writer.submit(reclaim_all, bare=True)

    async def read(
        self, stream_id: str, start: int, limit: int, max_bytes: int, *, whole: bool
    ) -> list[Chunk]:
        sid = self._sids.get(stream_id)
        if sid is None:
            return []
        return await self._readers.run(
            partial(
                chunks.read, sid=sid, start=start, limit=limit, max_bytes=max_bytes, whole=whole
            )
        )

    async def load_buckets(self) -> list[tuple[str, float]]:
        await self._start()
        return await self._writer.submit(rows.load_buckets)

    async def save_bucket(self, bucket_id: str, created_at: float) -> None:
        await self._writer.submit(
            partial(mutations.save_bucket, bucket_id=bucket_id, created_at=created_at)
        )

    async def drop_bucket(self, bucket_id: str) -> None:
        await self._writer.submit(partial(mutations.drop_bucket, bucket_id=bucket_id))

    async def save_snapshot(self, state: StreamState, data: bytes) -> None:
        assert state.snapshot is not None
        sid = self._sids.get(state.stream_id)
        if sid is None:
            raise StreamNotFound()
        save = partial(
            mutations.save_snapshot,
            sid=sid,
            snapshot=state.snapshot,
            earliest=state.earliest_offset,
            data=data,
        )
        # Replacing the previous blob frees its pages: reclaim them too.
        await self._writer.submit(save, frees=True)

    async def load_snapshot(self, stream_id: str, offset: int) -> bytes:
        sid = self._sids.get(stream_id)
        data = None
        if sid is not None:
            data = await self._readers.run(partial(rows.load_snapshot, sid=sid, offset=offset))
        if data is None:
            raise SnapshotNotFound()  # replaced by a newer one meanwhile
        return data

    async def reclaim_before(self, stream_id: str, before: int) -> None:
        sid = self._sids.get(stream_id)
        if sid is None:
            return
        await self._writer.submit(
            partial(mutations.reclaim_before, sid=sid, before=before), frees=True
        )

    async def is_boundary(self, stream_id: str, position: int) -> bool:
        sid = self._sids.get(stream_id)
        if sid is None:
            return False
        return await self._readers.run(partial(chunks.is_boundary, sid=sid, position=position))
