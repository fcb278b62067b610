"""Stream states to and from rows: ``streams``, ``producers``, ``writer_seqs``, ``snapshots``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, LiteralString

from ds_server.stores._producers import ProducerState
from ds_server.stores._rules import StreamState
from ds_server.stores.base import Expiry, ProducerClaim, SnapshotInfo

if TYPE_CHECKING:
    from collections.abc import Sequence

    import psycopg

# In the order ``_state`` unpacks them.
_COLUMNS: LiteralString = (
    "stream_id, path, content_type, created_at, ttl_seconds, expires_at, last_access, tail,"
    " fork_offset, forked_from, forked_from_id, fork_requested_offset, fork_sub_offset, closed,"
    " closed_by_producer, closed_by_epoch, closed_by_seq, soft_deleted, earliest_offset,"
    " last_write, version"
)
INSERT_STREAM: LiteralString = (
    "INSERT INTO streams (" + _COLUMNS + ") VALUES (" + ", ".join(["%s"] * 21) + ")"
)
_SELECT_STREAMS: LiteralString = "SELECT " + _COLUMNS + " FROM streams"
# Everything but the blob, which only ``load_snapshot`` reads.
_SELECT_SNAPSHOTS: LiteralString = (
    "SELECT stream_id, stream_offset, content_type, size, created_at FROM snapshots"
)


def stream_values(state: StreamState) -> tuple[object, ...]:
    """The ``streams`` row of ``state``, in ``INSERT_STREAM`` order."""
    closed_by = state.closed_by
    return (
        state.stream_id,
        state.path,
        state.content_type,
        state.created_at,
        state.expiry.ttl_seconds,
        state.expiry.expires_at,
        state.last_access,
        state.tail,
        state.fork_offset,
        state.forked_from,
        state.forked_from_id,
        state.fork_requested_offset,
        state.fork_sub_offset,
        state.closed,
        closed_by.producer_id if closed_by else None,
        closed_by.epoch if closed_by else None,
        closed_by.seq if closed_by else None,
        state.soft_deleted,
        state.earliest_offset,
        state.last_write,
        state.version,
    )


def _state(row: tuple[Any, ...]) -> StreamState:
    (
        stream_id,
        path,
        content_type,
        created_at,
        ttl_seconds,
        expires_at,
        last_access,
        tail,
        fork_offset,
        forked_from,
        forked_from_id,
        fork_requested_offset,
        fork_sub_offset,
        closed,
        closed_by_producer,
        closed_by_epoch,
        closed_by_seq,
        soft_deleted,
        earliest_offset,
        last_write,
        version,
    ) = row
    closed_by = None
    if closed_by_producer is not None:
        closed_by = ProducerClaim(closed_by_producer, closed_by_epoch, closed_by_seq)
    return StreamState(
        stream_id=stream_id,
        path=path,
        content_type=content_type,
        created_at=created_at,
        expiry=Expiry(ttl_seconds=ttl_seconds, expires_at=expires_at),
        last_access=last_access,
        tail=tail,
        fork_offset=fork_offset,
        forked_from=forked_from,
        forked_from_id=forked_from_id,
        # numeric comes back as Decimal.
        fork_requested_offset=None if fork_requested_offset is None else int(fork_requested_offset),
        fork_sub_offset=fork_sub_offset,
        closed=closed,
        closed_by=closed_by,
        soft_deleted=soft_deleted,
        earliest_offset=earliest_offset,
        last_write=last_write,
        version=version,
    )


async def _complete(
    conn: psycopg.AsyncConnection[Any],
    states: dict[str, StreamState],
    where: LiteralString,
    params: tuple[object, ...],
) -> None:
    """Add producers, Stream-Seq values and snapshot info to ``states`` (by stream id)."""
    cursor = await conn.execute(
        "SELECT stream_id, producer_id, epoch, last_seq FROM producers" + where, params
    )
    for stream_id, producer_id, epoch, last_seq in await cursor.fetchall():
        states[stream_id].producers[producer_id] = ProducerState(epoch=epoch, last_seq=last_seq)
    cursor = await conn.execute("SELECT stream_id, writer, seq FROM writer_seqs" + where, params)
    for stream_id, writer, seq in await cursor.fetchall():
        states[stream_id].writer_seqs[writer] = seq
    cursor = await conn.execute(_SELECT_SNAPSHOTS + where, params)
    for stream_id, offset, content_type, size, created_at in await cursor.fetchall():
        states[stream_id].snapshot = SnapshotInfo(offset, content_type, size, created_at)


async def load_states(conn: psycopg.AsyncConnection[Any]) -> list[StreamState]:
    """Every stored stream's state, read in one transaction (a consistent picture)."""
    async with conn.transaction():
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        cursor = await conn.execute(_SELECT_STREAMS)
        states = {row[0]: _state(row) for row in await cursor.fetchall()}
        await _complete(conn, states, "", ())
    return list(states.values())


async def load_stream(conn: psycopg.AsyncConnection[Any], path: str) -> StreamState | None:
    """The stored state of the stream at ``path``, or None."""
    async with conn.transaction():
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        cursor = await conn.execute(_SELECT_STREAMS + " WHERE path = %s", (path,))
        row = await cursor.fetchone()
        if row is None:
            return None
        state = _state(row)
        await _complete(conn, {state.stream_id: state}, " WHERE stream_id = %s", (state.stream_id,))
    return state


async def stream_version(conn: psycopg.AsyncConnection[Any], stream_id: str) -> int | None:
    """The stored version of a stream, or None once purged."""
    cursor = await conn.execute("SELECT version FROM streams WHERE stream_id = %s", (stream_id,))
    row = await cursor.fetchone()
    return None if row is None else int(row[0])


async def count_forks(conn: psycopg.AsyncConnection[Any], stream_id: str) -> int:
    """How many stored streams (soft-deleted ones included) are forks of ``stream_id``."""
    cursor = await conn.execute(
        "SELECT count(*) FROM streams WHERE forked_from_id = %s", (stream_id,)
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def load_buckets(conn: psycopg.AsyncConnection[Any]) -> list[tuple[str, float]]:
    """Every bucket as ``(bucket_id, created_at)``."""
    cursor = await conn.execute("SELECT bucket_id, created_at FROM buckets")
    return [(bucket_id, created_at) for bucket_id, created_at in await cursor.fetchall()]


async def load_usage(
    conn: psycopg.AsyncConnection[Any], buckets: Sequence[str]
) -> list[tuple[str, int, int]]:
    """The stored totals ``(bucket, bytes, streams)`` of those of ``buckets`` that have a row."""
    cursor = await conn.execute(
        "SELECT bucket, bytes, streams FROM bucket_usage WHERE bucket = ANY(%s::text[])",
        (list(buckets),),
    )
    return [(name, int(size), int(streams)) for name, size, streams in await cursor.fetchall()]


async def load_snapshot(
    conn: psycopg.AsyncConnection[Any], stream_id: str, offset: int
) -> bytes | None:
    """The blob of the stream's snapshot if it is (still) the one at ``offset``."""
    cursor = await conn.execute(
        "SELECT data FROM snapshots WHERE stream_id = %s AND stream_offset = %s",
        (stream_id, offset),
    )
    row = await cursor.fetchone()
    return None if row is None else bytes(row[0])
