"""``sync_mirrors`` and ``sync_mirror_outbox``: each table's feed position, producer and batch.

Delivering a batch takes two statements around the POSTs:

1. **stage**: the POST bodies go into the outbox with their Producer-Seq,
   and ``pending_position`` records where the feed stands after them;
2. **commit**: ``position`` takes ``pending_position``, ``next_seq`` moves
   past the bodies, the outbox empties.

A process that dies in between leaves the batch in the outbox, and the next
one sends exactly those bodies again with the same seqs before reading on,
so the server keeps each once (204 for those it has). Both statements are
compare-and-set on (epoch, next_seq): a second ds-sync on the same table,
or a commit whose answer was lost, can't move a position twice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from psycopg_pool import AsyncConnectionPool

    from ds_sync.table_names import TableName


class StaleMirror(Exception):
    """The table's row changed under us (another ds-sync, or a lost answer): load it again."""


@dataclass(frozen=True, slots=True)
class MirrorState:
    """One table's row, and its outbox when a batch is being delivered."""

    table: str  # schema.table
    stream: str
    feed: str
    producer_id: str
    epoch: int
    next_seq: int
    position: bytes | None
    pending_position: bytes | None = None
    outbox: tuple[tuple[int, bytes], ...] = ()
    # The latest snapshot compaction published (offset, Unix time), as recorded.
    snapshot: tuple[str, float] | None = None


_SELECT = (
    "SELECT stream, feed, producer_id, producer_epoch, next_seq, position::text, "
    "pending_position::text, snapshot_offset, extract(epoch FROM snapshot_at)::float8 "
    "FROM sync_mirrors WHERE table_name = %s"
)
_STAGE = """
WITH moved AS (
    UPDATE sync_mirrors SET pending_position = %s::jsonb, updated_at = now()
    WHERE table_name = %s AND producer_epoch = %s AND next_seq = %s
        AND pending_position IS NULL
    RETURNING table_name
), staged AS (
    INSERT INTO sync_mirror_outbox (table_name, seq, body)
    SELECT m.table_name, b.seq, b.body
    FROM moved m CROSS JOIN unnest(%s::int8[], %s::bytea[]) AS b(seq, body)
)
SELECT count(*) FROM moved
"""
_COMMIT = """
WITH moved AS (
    UPDATE sync_mirrors SET position = pending_position, pending_position = NULL,
        next_seq = %s, status = 'active', detail = NULL, updated_at = now()
    WHERE table_name = %s AND producer_epoch = %s AND next_seq = %s
        AND pending_position IS NOT NULL
    RETURNING table_name
), cleared AS (
    DELETE FROM sync_mirror_outbox o USING moved m WHERE o.table_name = m.table_name
)
SELECT count(*) FROM moved
"""


class MirrorStore:
    """The statements on one database; every method is one transaction."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self._pool = pool

    async def load(self, table: TableName, feed: str, producer_id: str) -> MirrorState:
        """The table's state, created (not synced, a new epoch) when it has none."""
        async with self._pool.connection() as conn:
            await conn.execute(
                "INSERT INTO sync_mirrors (table_name, stream, feed, producer_id, producer_epoch) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (table_name) DO NOTHING",
                (table.qualified, table.stream, feed, producer_id, _new_epoch(0)),
            )
            cursor = await conn.execute(_SELECT, (table.qualified,))
            row = await cursor.fetchone()
            assert row is not None
            cursor = await conn.execute(
                "SELECT seq, body FROM sync_mirror_outbox WHERE table_name = %s ORDER BY seq",
                (table.qualified,),
            )
            outbox = tuple((int(seq), bytes(body)) for seq, body in await cursor.fetchall())
        stream, stored_feed, stored_producer, epoch, next_seq, position, pending = row[:7]
        snapshot_offset, snapshot_at = row[7:]
        return MirrorState(
            table=table.qualified,
            stream=stream,
            feed=stored_feed,
            producer_id=stored_producer,
            epoch=int(epoch),
            next_seq=int(next_seq),
            position=None if position is None else position.encode(),
            pending_position=None if pending is None else pending.encode(),
            outbox=outbox if pending is not None else (),
            snapshot=None if snapshot_offset is None else (snapshot_offset, float(snapshot_at)),
        )

    async def stage(self, state: MirrorState, bodies: list[bytes], position: bytes) -> MirrorState:
        """Record a batch before its first POST; the state with its outbox."""
        seqs = list(range(state.next_seq, state.next_seq + len(bodies)))
        params = (position.decode(), state.table, state.epoch, state.next_seq, seqs, bodies)
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_STAGE, params)
            row = await cursor.fetchone()
        if row is None or row[0] != 1:
            raise StaleMirror(state.table)
        return replace(
            state, pending_position=position, outbox=tuple(zip(seqs, bodies, strict=True))
        )

    async def commit(self, state: MirrorState) -> MirrorState:
        """The outbox is delivered: move the position and the seq past it."""
        next_seq = state.next_seq + len(state.outbox)
        params = (next_seq, state.table, state.epoch, state.next_seq)
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_COMMIT, params)
            row = await cursor.fetchone()
        if row is None or row[0] != 1:
            raise StaleMirror(state.table)
        return replace(
            state,
            next_seq=next_seq,
            position=state.pending_position,
            pending_position=None,
            outbox=(),
        )

    async def move(self, state: MirrorState, position: bytes) -> MirrorState:
        """Move the position with nothing to deliver (the feed skipped what isn't ours)."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                "UPDATE sync_mirrors SET position = %s::jsonb, updated_at = now() "
                "WHERE table_name = %s AND producer_epoch = %s AND next_seq = %s "
                "AND pending_position IS NULL",
                (position.decode(), state.table, state.epoch, state.next_seq),
            )
            if cursor.rowcount != 1:
                raise StaleMirror(state.table)
        return replace(state, position=position)

    async def start_over(self, state: MirrorState, feed: str) -> MirrorState:
        """Sync from scratch under a new producer epoch (seq 0): the server's producer state
        for this stream is not ours any more, or the feed changed."""
        epoch = _new_epoch(state.epoch)
        async with self._pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(
                "UPDATE sync_mirrors SET producer_epoch = %s, next_seq = 0, position = NULL, "
                "pending_position = NULL, feed = %s, updated_at = now() "
                "WHERE table_name = %s AND producer_epoch = %s AND next_seq = %s",
                (epoch, feed, state.table, state.epoch, state.next_seq),
            )
            if cursor.rowcount != 1:
                raise StaleMirror(state.table)
            await conn.execute(
                "DELETE FROM sync_mirror_outbox WHERE table_name = %s", (state.table,)
            )
        return replace(
            state,
            feed=feed,
            epoch=epoch,
            next_seq=0,
            position=None,
            pending_position=None,
            outbox=(),
        )

    async def register(self, table: TableName, feed: str, producer_id: str, lock_key: int) -> None:
        """Make the table's row (not synced, a new epoch) if it has none, with the key of
        its advisory lock (``sync_mirror_instances`` shows who holds and who waits for it)."""
        async with self._pool.connection() as conn:
            await conn.execute(
                "INSERT INTO sync_mirrors (table_name, stream, feed, producer_id, producer_epoch, "
                "lock_key) VALUES (%s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (table_name) DO UPDATE SET lock_key = EXCLUDED.lock_key "
                "WHERE sync_mirrors.lock_key IS DISTINCT FROM EXCLUDED.lock_key",
                (table.qualified, table.stream, feed, producer_id, _new_epoch(0), lock_key),
            )

    async def set_active(self, table: str, instance: str) -> None:
        """This process holds the table's lock: it is the one mirroring the table now."""
        async with self._pool.connection() as conn:
            await conn.execute(
                "UPDATE sync_mirrors SET active_instance = %s, active_since = now() "
                "WHERE table_name = %s",
                (instance, table),
            )

    async def active_instance(self, table: str) -> str | None:
        """Who recorded itself as mirroring the table last."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT active_instance FROM sync_mirrors WHERE table_name = %s", (table,)
            )
            row = await cursor.fetchone()
        return None if row is None else row[0]

    async def record_snapshot(self, table: str, offset: str) -> float:
        """Compaction published a snapshot at ``offset`` (now); when, as Unix time."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                "UPDATE sync_mirrors SET snapshot_offset = %s, snapshot_at = now() "
                "WHERE table_name = %s RETURNING extract(epoch FROM snapshot_at)::float8",
                (offset, table),
            )
            row = await cursor.fetchone()
        return time.time() if row is None else float(row[0])

    async def set_status(self, table: str, status: str, detail: str | None) -> None:
        """``active``, or ``failed`` with why (the position stays where it is)."""
        async with self._pool.connection() as conn:
            await conn.execute(
                "UPDATE sync_mirrors SET status = %s, detail = %s, updated_at = now() "
                "WHERE table_name = %s",
                (status, detail, table),
            )


def _new_epoch(previous: int) -> int:
    """Milliseconds since the Unix epoch, and always above ``previous``: a newer ds-sync
    state for a table fences any older one still writing (403 for its POSTs)."""
    return max(int(time.time() * 1000), previous + 1)
