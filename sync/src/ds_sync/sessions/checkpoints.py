"""The ``sync_checkpoints`` table: per stream, where the next read starts, and its status.

Rows and checkpoint moves are written together by the writer; this module
holds the other statements: loading, first sight of a stream, and status
changes that carry no rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from durable_sessions.protocol.offsets import START

from ds_sync.sessions.model import Status

if TYPE_CHECKING:
    from psycopg_pool import AsyncConnectionPool


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One row of ``sync_checkpoints``."""

    stream: str
    next_offset: str
    status: Status
    created_ms: int | None
    detail: str | None = None


async def load_all(pool: AsyncConnectionPool) -> dict[str, Checkpoint]:
    """Every stream ds-sync has seen, by path."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT stream_name, next_offset, status, stream_created_ms, detail "
            "FROM sync_checkpoints"
        )
        rows = await cursor.fetchall()
    return {row[0]: Checkpoint(row[0], row[1], Status(row[2]), row[3], row[4]) for row in rows}


async def load(pool: AsyncConnectionPool, stream: str) -> Checkpoint | None:
    """The stream's row as committed now."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT stream_name, next_offset, status, stream_created_ms, detail "
            "FROM sync_checkpoints WHERE stream_name = %s",
            (stream,),
        )
        row = await cursor.fetchone()
    return None if row is None else Checkpoint(row[0], row[1], Status(row[2]), row[3], row[4])


async def first_sight(pool: AsyncConnectionPool, stream: str, created_ms: int | None) -> Checkpoint:
    """The stream's row, created at the start of the stream if it has none."""
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO sync_checkpoints (stream_name, next_offset, stream_created_ms) "
            "VALUES (%s, %s, %s) ON CONFLICT (stream_name) DO NOTHING",
            (stream, START, created_ms),
        )
    found = await load(pool, stream)
    assert found is not None
    return found


async def set_created(pool: AsyncConnectionPool, stream: str, created_ms: int) -> None:
    """Remember the stream's creation time, learnt after its first sight."""
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE sync_checkpoints SET stream_created_ms = %s "
            "WHERE stream_name = %s AND stream_created_ms IS NULL",
            (created_ms, stream),
        )


async def set_status(pool: AsyncConnectionPool, stream: str, status: Status, detail: str) -> None:
    """Mark the stream deleted or failed (its offset stays where the rows end)."""
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE sync_checkpoints SET status = %s, detail = %s, updated_at = now() "
            "WHERE stream_name = %s",
            (status.value, detail, stream),
        )
