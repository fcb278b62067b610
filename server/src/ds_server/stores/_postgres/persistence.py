"""``SharedPersistence`` on Postgres: fenced group commits, pooled reads, a change feed."""

from __future__ import annotations

import logging
import secrets
from functools import partial
from typing import TYPE_CHECKING, Any

import psycopg

from ds_server.stores._postgres import chunks, feed, mutations, rows, schema
from ds_server.stores._postgres.writer import Writer, WriterStats
from ds_server.stores._quotas import NO_QUOTAS, Quota, bucket_of
from ds_server.stores.errors import SnapshotNotFound, StorageUnavailable, StoreError
from ds_server.stores.persistence import SharedPersistence

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable, Sequence

    from ds_server.postgres_database import PostgresDatabase
    from ds_server.stores._commit import AppendCommit
    from ds_server.stores._quotas import QuotaPolicy
    from ds_server.stores._rules import StreamState
    from ds_server.stores.persistence import Chunk, StreamChange

log = logging.getLogger("ds_server.postgres")

NO_QUOTA = Quota()


class PostgresPersistence(SharedPersistence):
    """Streams in Postgres tables of their own schema; several processes may share them.

    Every mutation goes through one writer connection that commits
    concurrent ones together (``writer``); reads use the database's pool. Each
    acknowledged write is committed with ``synchronous_commit=on``.
    """

    def __init__(self, database: PostgresDatabase, *, quotas: QuotaPolicy = NO_QUOTAS) -> None:
        self.origin = secrets.token_hex(8)
        self._quotas = quotas
        # The process's connections to the database: the store owns it and closes it last,
        # after the subscription storage and the leadership that share it.
        self.database = database
        self._schema = database.schema
        self._channel = feed.channel_name(database.schema)
        self._writer = Writer(database, self._channel, self.origin)
        self._feed = mutations.Feed(self._channel, self.origin)
        self._started = False
        self._listeners: list[feed.Listener] = []
        self._barriers = feed.Barriers(self._channel, self.origin)

    @property
    def stats(self) -> WriterStats:
        """Write transactions and mutations committed so far."""
        return self._writer.stats

    # -- lifecycle ------------------------------------------------------------

    async def _start(self) -> None:
        # Buckets are loaded before the streams, so whichever comes first opens.
        if self._started:
            return
        await self.database.open()
        async with self.database.connection() as conn:
            await schema.ensure_schema(conn, self._schema)
        await self._writer.start()
        self._started = True

    async def open(self) -> list[StreamState]:
        await self._start()
        states: list[StreamState] = await self._read(rows.load_states)
        return states

    async def close(self) -> None:
        for listener in self._listeners:
            await listener.stop()
        self._listeners.clear()
        await self._writer.stop()
        await self.database.close()
        self._started = False

    def reserve(self, size: int) -> None:
        return None  # the database's limits are only known when the writer commits

    async def _read(self, work: Callable[[psycopg.AsyncConnection[Any]], Awaitable[Any]]) -> Any:
        try:
            return await self.database.run(work)
        except psycopg.OperationalError as error:  # lost twice, or every connection busy
            raise StorageUnavailable() from error

    # -- streams --------------------------------------------------------------

    def _counted_in(self, path: str) -> tuple[str, ...]:
        bucket = bucket_of(path)
        return () if bucket is None else (bucket,)

    def _quota_of(self, path: str) -> Quota:
        bucket = bucket_of(path)
        return self._quotas.quota_of(bucket) if bucket is not None else NO_QUOTA

    async def create(self, state: StreamState, messages: Sequence[bytes]) -> None:
        self._writer.reset(state.stream_id)
        refused = await self._writer.submit(
            partial(
                mutations.create_stream,
                announce=self._feed,
                state=state,
                messages=messages,
                quota=self._quota_of(state.path),
            ),
            self._counted_in(state.path),
        )
        if refused is not None:
            raise refused

    async def append(self, commit: AppendCommit) -> asyncio.Future[None]:
        # Even a write that stores nothing is stored: it moves the version.
        return self._writer.append(commit)

    async def save_state(self, state: StreamState) -> None:
        await self._writer.submit(partial(mutations.save_state, announce=self._feed, state=state))

    async def save_access(self, accesses: Sequence[tuple[str, float]]) -> None:
        if not accesses:
            return
        try:
            await self._writer.submit(partial(mutations.save_access, accesses=list(accesses)))
        except (StoreError, psycopg.Error) as error:
            # Best effort: a lost access time only makes a sliding TTL expire early.
            log.warning("could not record stream access times: %s", error)

    async def purge(self, state: StreamState) -> None:
        await self._writer.submit(
            partial(mutations.purge, announce=self._feed, state=state),
            self._counted_in(state.path),
        )
        self._writer.reset(state.stream_id)

    async def read(
        self, stream_id: str, start: int, limit: int, max_bytes: int, *, whole: bool
    ) -> list[Chunk]:
        result: list[Chunk] = await self._read(
            partial(
                chunks.read,
                stream_id=stream_id,
                start=start,
                limit=limit,
                max_bytes=max_bytes,
                whole=whole,
            )
        )
        return result

    async def is_boundary(self, stream_id: str, position: int) -> bool:
        found: bool = await self._read(
            partial(chunks.is_boundary, stream_id=stream_id, position=position)
        )
        return found

    # -- buckets ----------------------------------------------------------------

    async def load_buckets(self) -> list[tuple[str, float]]:
        await self._start()
        buckets: list[tuple[str, float]] = await self._read(rows.load_buckets)
        return buckets

    async def save_bucket(self, bucket_id: str, created_at: float) -> None:
        await self._writer.submit(
            partial(
                mutations.save_bucket,
                announce=self._feed,
                bucket_id=bucket_id,
                created_at=created_at,
            )
        )

    async def drop_bucket(self, bucket_id: str) -> None:
        await self._writer.submit(
            partial(mutations.drop_bucket, announce=self._feed, bucket_id=bucket_id)
        )

    # -- snapshots and retention ------------------------------------------------

    async def save_snapshot(self, state: StreamState, data: bytes) -> None:
        assert state.snapshot is not None
        refused = await self._writer.submit(
            partial(
                mutations.save_snapshot,
                announce=self._feed,
                state=state,
                snapshot=state.snapshot,
                earliest=state.earliest_offset,
                data=data,
                quota=self._quota_of(state.path),
            ),
            self._counted_in(state.path),
        )
        if refused is not None:
            raise refused

    async def load_snapshot(self, stream_id: str, offset: int) -> bytes:
        data: bytes | None = await self._read(
            partial(rows.load_snapshot, stream_id=stream_id, offset=offset)
        )
        if data is None:
            raise SnapshotNotFound()  # replaced by a newer one meanwhile
        return data

    async def reclaim_before(self, stream_id: str, before: int) -> None:
        await self._writer.submit(
            partial(mutations.reclaim_before, stream_id=stream_id, before=before)
        )

    # -- sharing ----------------------------------------------------------------

    async def load_stream(self, path: str) -> StreamState | None:
        state: StreamState | None = await self._read(partial(rows.load_stream, path=path))
        if state is not None:
            # The engine decides the stream's next writes on this state.
            self._writer.reset(state.stream_id)
        return state

    async def stream_version(self, stream_id: str) -> int | None:
        version: int | None = await self._read(partial(rows.stream_version, stream_id=stream_id))
        return version

    async def load_streams(self) -> list[StreamState]:
        states: list[StreamState] = await self._read(rows.load_states)
        return states

    async def load_usage(self, buckets: Sequence[str]) -> list[tuple[str, int, int]]:
        usage: list[tuple[str, int, int]] = await self._read(
            partial(rows.load_usage, buckets=buckets)
        )
        return usage

    async def count_forks(self, stream_id: str) -> int:
        count: int = await self._read(partial(rows.count_forks, stream_id=stream_id))
        return count

    async def listen(self, on_change: Callable[[StreamChange | None], None]) -> None:
        listener = feed.Listener(self.database, self._channel, self._barriers.passing(on_change))
        await listener.start()
        self._listeners.append(listener)

    async def barrier(self) -> None:
        if not self._listeners:
            return  # nobody listens: there is nothing to catch up on
        await self._barriers.cross(self._read)
