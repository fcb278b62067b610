"""Stream bytes in the ``chunks`` table: cutting into pieces, reading ranges, finding boundaries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ds_server.stores._chunks import ChunkCutter
from ds_server.stores._postgres.schema import PIECE_BYTES

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

    import psycopg

    from ds_server.stores.persistence import Chunk

# The pieces of a range from the one holding ``lo`` (one round trip), each cut
# to ``[lo, cut)`` by the server: with uncompressed out-of-line storage,
# ``substring`` reads only the part it returns, so a small page of a large
# append costs its own size, not the piece's.
_WINDOW = """
    SELECT start + skip, cont,
        substring(data FROM (skip + 1)::int
            FOR GREATEST(LEAST(octet_length(data), %(cut)s - start) - skip, 0)::int)
    FROM chunks, LATERAL (SELECT GREATEST(%(lo)s - start, 0) AS skip) AS k
    WHERE stream_id = %(sid)s AND start < %(hi)s AND start >= COALESCE(
        (SELECT start FROM chunks WHERE stream_id = %(sid)s AND start <= %(lo)s
         ORDER BY start DESC LIMIT 1), %(lo)s)
    ORDER BY start
"""
_NEXT = """
    SELECT start, cont,
        substring(data FROM 1 FOR LEAST(octet_length(data), %(cut)s - start)::int)
    FROM chunks WHERE stream_id = %(sid)s AND start >= %(lo)s AND start < %(cut)s
    ORDER BY start LIMIT %(rows)s
"""
_BOUNDARY = "SELECT cont FROM chunks WHERE stream_id = %s AND start = %s"
# Pieces fetched per extra query when a read goes on past its first window.
_MORE_ROWS = 16


def pieces(start: int, messages: Sequence[bytes]) -> tuple[list[int], list[bool], list[bytes]]:
    """``messages`` stored back to back from ``start``, as ``ds_append``'s piece arrays."""
    starts: list[int] = []
    conts: list[bool] = []
    datas: list[bytes] = []
    for message in messages:
        if len(message) <= PIECE_BYTES:
            # An empty message is nothing to store (and would share its start with the next).
            if message:
                starts.append(start)
                conts.append(False)
                datas.append(message)
        else:
            for cut in range(0, len(message), PIECE_BYTES):
                starts.append(start + cut)
                conts.append(cut > 0)
                datas.append(message[cut : cut + PIECE_BYTES])
        start += len(message)
    return starts, conts, datas


def insert(
    conn: psycopg.Connection[Any], stream_id: str, start: int, messages: Sequence[bytes]
) -> None:
    """Store ``messages`` back to back from stream offset ``start``."""
    starts, conts, datas = pieces(start, messages)
    if starts:
        conn.execute(
            "INSERT INTO chunks (stream_id, start, cont, data) SELECT %s, s, c, d"
            " FROM unnest(%s::bigint[], %s::boolean[], %s::bytea[]) AS t(s, c, d)",
            (stream_id, starts, conts, datas),
        )


async def _rows(
    conn: psycopg.AsyncConnection[Any],
    stream_id: str,
    start: int,
    limit: int,
    max_bytes: int,
    whole: bool,
) -> AsyncIterator[tuple[int, bool, bytes]]:
    """The pieces from the one holding ``start`` up to ``limit``, fetched as the reader goes.

    The first window covers every piece starting before ``start + max_bytes``
    (offsets are byte positions), which is all most reads need; only a read
    that keeps a long message whole goes on, a few pieces at a time.
    """
    hi = min(limit, start + max(max_bytes, 1))
    # A byte read needs nothing past its page; a whole read, its last message whole.
    cut = limit if whole else hi
    params = {"sid": stream_id, "lo": start, "hi": hi, "cut": cut, "rows": _MORE_ROWS}
    cursor = await conn.execute(_WINDOW, params)
    rows = await cursor.fetchall()
    while True:
        for row in rows:
            yield row
        if hi >= cut:
            return
        cursor = await conn.execute(_NEXT, {**params, "lo": hi})
        rows = await cursor.fetchall()
        if not rows:
            return
        hi = cut if len(rows) < _MORE_ROWS else rows[-1][0] + 1


async def read(
    conn: psycopg.AsyncConnection[Any],
    stream_id: str,
    start: int,
    limit: int,
    max_bytes: int,
    *,
    whole: bool,
) -> list[Chunk]:
    """The chunks overlapping ``[start, limit)``, as ``Persistence.read`` defines them.

    Pieces are fetched only while the ``ChunkCutter`` wants more.
    """
    cutter = ChunkCutter(start, limit, max_bytes, whole=whole)
    async for piece_start, cont, data in _rows(conn, stream_id, start, limit, max_bytes, whole):
        if not cutter.take(piece_start, cont, data):
            break
    return cutter.chunks()


async def is_boundary(conn: psycopg.AsyncConnection[Any], stream_id: str, position: int) -> bool:
    """True when a message or append (not a later piece of one) starts at ``position``."""
    cursor = await conn.execute(_BOUNDARY, (stream_id, position))
    row = await cursor.fetchone()
    return row is not None and not row[0]
