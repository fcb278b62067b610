"""Stream states to and from the Postgres tables (the mapping is ``_state_rows``), and lookups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, LiteralString

from ds_server.stores._state_rows import (
    PRODUCER_COLUMNS,
    SNAPSHOT_COLUMNS,
    STREAM_COLUMNS,
    WRITER_SEQ_COLUMNS,
    complete_states,
    stream_state,
    stream_values,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    import psycopg

    from ds_server.stores._rules import StreamState

_COLUMNS: LiteralString = ", ".join((*STREAM_COLUMNS, "version"))
INSERT_STREAM: LiteralString = (
    "INSERT INTO streams ("
    + _COLUMNS
    + ") VALUES ("
    + ", ".join(["%s"] * (len(STREAM_COLUMNS) + 1))
    + ")"
)
_SELECT_STREAMS: LiteralString = "SELECT " + _COLUMNS + " FROM streams"


def stream_row(state: StreamState) -> tuple[object, ...]:
    """The ``streams`` row of ``state``, in ``INSERT_STREAM`` order."""
    return (*stream_values(state), state.version)


def _state(row: tuple[Any, ...]) -> StreamState:
    return stream_state(row[:-1], version=row[-1])


async def _complete(
    conn: psycopg.AsyncConnection[Any],
    states: dict[str, StreamState],
    where: LiteralString,
    params: tuple[object, ...],
) -> None:
    """Add producers, Stream-Seq values and snapshot info to ``states`` (by stream id)."""
    rows = []
    for table, columns in (
        ("producers", PRODUCER_COLUMNS),
        ("writer_seqs", WRITER_SEQ_COLUMNS),
        ("snapshots", SNAPSHOT_COLUMNS),
    ):
        cursor = await conn.execute(
            "SELECT stream_id, " + columns + " FROM " + table + where, params
        )
        rows.append(await cursor.fetchall())
    complete_states(states, *rows)


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
